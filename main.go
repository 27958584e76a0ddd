// Command warren is a terminal dashboard and CLI for RabbitMQ on-call
// operators: live queue and dead-letter views joined with the consumers'
// inbox, and audited replay and quarantine of dead letters.
package main

import (
	"os"

	"github.com/warrenops/warren/cli"
)

func main() { os.Exit(cli.Main()) }
