package zkmem_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/conformance"
	"github.com/zksim/zksim/zkmem"
)

// conformanceTick is the tick time of the servers the suite runs on: short,
// so that the session-timeout cases (2 ticks at least) are quick.
const conformanceTick = 100 * time.Millisecond

// TestConformance runs the conformance suite on zkmem, configured like the
// real server it is compared with (zkserver: tickTime 100ms, TTL nodes on),
// and again with TTL nodes off, zkmem's and ZooKeeper's default.
func TestConformance(t *testing.T) {
	t.Run("ExtendedTypes", func(t *testing.T) { conformance.Run(t, zkmemBackend(t, true)) })
	t.Run("NoExtendedTypes", func(t *testing.T) { conformance.Run(t, zkmemBackend(t, false)) })
}

func zkmemBackend(t *testing.T, extendedTypes bool) conformance.Backend {
	opts := zkmem.Options{
		TickTime:               conformanceTick,
		ExtendedTypes:          extendedTypes,
		ContainerCheckInterval: 20 * time.Millisecond,
	}
	srv := zkmem.NewServer(opts)
	t.Cleanup(srv.Close)
	return conformance.Backend{
		Name: "zkmem",
		Connect: func(_ context.Context, timeout time.Duration) (zksim.Conn, error) {
			return srv.Connect(zkmem.WithSessionTimeout(timeout))
		},
		Expire: func(_ context.Context, c zksim.Conn) error {
			mc, err := asZkmem(c)
			if err != nil {
				return err
			}
			control(mc).Expire()
			return nil
		},
		Disconnect: func(_ context.Context, c zksim.Conn) error {
			mc, err := asZkmem(c)
			if err != nil {
				return err
			}
			control(mc).Disconnect()
			return nil
		},
		Reconnect: func(_ context.Context, c zksim.Conn) error {
			mc, err := asZkmem(c)
			if err != nil {
				return err
			}
			return control(mc).Reconnect()
		},
		SetNextSequence: func(_ context.Context, parent string, next int32) error {
			return srv.SetNextSequence(parent, next)
		},
		Facts: conformance.Facts{
			TickTime:               opts.TickTime,
			ExtendedTypes:          opts.ExtendedTypes,
			ContainerCheckInterval: opts.ContainerCheckInterval,
		},
	}
}

func asZkmem(c zksim.Conn) (*zkmem.Conn, error) {
	mc, ok := c.(*zkmem.Conn)
	if !ok {
		return nil, fmt.Errorf("not a *zkmem.Conn: %T", c)
	}
	return mc, nil
}
