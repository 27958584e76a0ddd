package actions

import (
	"errors"
	"fmt"

	amqp "github.com/rabbitmq/amqp091-go"
)

// preflight checks, without changing anything, what would otherwise fail
// mid-operation: a publish to a missing exchange closes the channel, so
// every named exchange must exist. It reports whether the parking queue
// of a quarantine is missing and must be declared.
func preflight(conn *amqp.Connection, plan *Plan) (declareParking bool, err error) {
	seen := map[string]bool{}
	for _, g := range plan.Groups {
		ex := g.Dest.Exchange
		if ex == "" || seen[ex] {
			continue
		}
		seen[ex] = true
		err := passive(conn, func(ch *amqp.Channel) error {
			return ch.ExchangeDeclarePassive(ex, amqp.ExchangeDirect, false, false, false, false, nil)
		})
		if err != nil {
			return false, fmt.Errorf("destination exchange %s in vhost %s: %w", ex, plan.Vhost, err)
		}
	}
	if plan.Action != ActionQuarantine {
		return false, nil
	}
	err = passive(conn, func(ch *amqp.Channel) error {
		_, err := ch.QueueDeclarePassive(plan.Parking, true, false, false, false, nil)
		return err
	})
	var ae *amqp.Error
	if errors.As(err, &ae) && ae.Code == amqp.NotFound {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("parking queue %s in vhost %s: %w", plan.Parking, plan.Vhost, err)
	}
	return false, nil
}

// passive runs check on a throwaway channel, since a failed passive
// declare closes the channel it ran on.
func passive(conn *amqp.Connection, check func(*amqp.Channel) error) error {
	ch, err := conn.Channel()
	if err != nil {
		return err
	}
	err = check(ch)
	if cerr := ch.Close(); err == nil && cerr != nil && !errors.Is(cerr, amqp.ErrClosed) {
		err = cerr
	}
	return err
}

// declareQueue creates a durable classic queue; its type is explicit so a
// vhost whose default queue type is quorum or stream does not change it.
func declareQueue(conn *amqp.Connection, name string) error {
	ch, err := conn.Channel()
	if err != nil {
		return err
	}
	defer ch.Close()
	_, err = ch.QueueDeclare(name, true, false, false, false, amqp.Table{"x-queue-type": "classic"})
	var ae *amqp.Error
	if errors.As(err, &ae) && ae.Code == amqp.AccessRefused {
		return fmt.Errorf("%w; nothing was changed: the user needs the configure permission on %s to declare it, "+
			"or someone who has it declares it (a durable classic queue), or the config's quarantine names a queue the user may write to", err, name)
	}
	return err
}
