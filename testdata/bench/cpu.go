package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// clockTicks is the kernel's USER_HZ, the unit of /proc's CPU times.
const clockTicks = 100

// cpuSample is the CPU time used so far by every RabbitMQ node on this
// machine (beam.smp processes) and by the machine as a whole.
type cpuSample struct {
	broker, idle, total int64 // in clock ticks
	at                  time.Time
}

// sampleCPU reads /proc. On a machine without it the sample is empty and
// the figures read as zero.
func sampleCPU() cpuSample {
	s := cpuSample{at: time.Now()}
	comms, _ := filepath.Glob("/proc/[0-9]*/comm")
	for _, c := range comms {
		b, err := os.ReadFile(c)
		if err != nil || strings.TrimSpace(string(b)) != "beam.smp" {
			continue
		}
		st, err := os.ReadFile(filepath.Join(filepath.Dir(c), "stat"))
		if err != nil {
			continue
		}
		// Fields after the command name, which may hold spaces: utime
		// and stime are the 14th and 15th of the whole line.
		f := strings.Fields(string(st[strings.LastIndexByte(string(st), ')')+1:]))
		if len(f) < 13 {
			continue
		}
		u, _ := strconv.ParseInt(f[11], 10, 64)
		k, _ := strconv.ParseInt(f[12], 10, 64)
		s.broker += u + k
	}
	if b, err := os.ReadFile("/proc/stat"); err == nil {
		line, _, _ := strings.Cut(string(b), "\n")
		for i, x := range strings.Fields(line)[1:] {
			v, _ := strconv.ParseInt(x, 10, 64)
			s.total += v
			if i == 3 || i == 4 { // idle and iowait
				s.idle += v
			}
		}
	}
	return s
}

// cpuUse is what the brokers and the machine did between two samples.
type cpuUse struct {
	brokerCores float64 // CPU cores the brokers kept busy on average
	idle        float64 // share of the machine's CPU time left idle
}

func (s cpuSample) until(e cpuSample) cpuUse {
	wall := e.at.Sub(s.at).Seconds()
	u := cpuUse{}
	if wall > 0 {
		u.brokerCores = float64(e.broker-s.broker) / clockTicks / wall
	}
	if t := e.total - s.total; t > 0 {
		u.idle = float64(e.idle-s.idle) / float64(t)
	}
	return u
}

// perMessage is the broker's CPU time per message moved at rate msg/s.
func (u cpuUse) perMessage(rate float64) time.Duration {
	if rate <= 0 {
		return 0
	}
	return time.Duration(u.brokerCores / rate * float64(time.Second))
}

func (u cpuUse) String() string {
	return fmt.Sprintf("%.2f cores, %.0f%% idle", u.brokerCores, 100*u.idle)
}
