package zktest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/zkmem"
)

// OpenMem starts a zkmem server with opts, closed when t ends, and returns
// it as a Backend. Inside a testing/synctest bubble the server runs on the
// bubble's virtual time.
func OpenMem(t testing.TB, opts zkmem.Options) *Backend {
	t.Helper()
	srv := zkmem.NewServer(opts)
	t.Cleanup(srv.Close)
	return Mem(srv)
}

// Mem returns srv as a Backend, with every control: Expire, Disconnect and
// Reconnect act on the *zkmem.Conn the backend's Connect opened, and
// SetNextSequence on the server. Facts are srv's options. The caller closes
// srv.
func Mem(srv *zkmem.Server) *Backend {
	return &Backend{
		Name: MemName,
		Connect: func(_ context.Context, timeout time.Duration) (zksim.Conn, error) {
			return srv.Connect(zkmem.WithSessionTimeout(timeout))
		},
		Expire: func(_ context.Context, c zksim.Conn) error {
			mc, err := asZkmem(c)
			if err != nil {
				return err
			}
			mc.Expire()
			return nil
		},
		Disconnect: func(_ context.Context, c zksim.Conn) error {
			mc, err := asZkmem(c)
			if err != nil {
				return err
			}
			mc.Disconnect()
			return nil
		},
		Reconnect: func(_ context.Context, c zksim.Conn) error {
			mc, err := asZkmem(c)
			if err != nil {
				return err
			}
			return mc.Reconnect()
		},
		SetNextSequence: func(_ context.Context, parent string, next int32) error {
			return srv.SetNextSequence(parent, next)
		},
		Facts: srv.Options(),
		Mem:   srv,
	}
}

func asZkmem(c zksim.Conn) (*zkmem.Conn, error) {
	mc, ok := c.(*zkmem.Conn)
	if !ok {
		return nil, fmt.Errorf("not a *zkmem.Conn: %T", c)
	}
	return mc, nil
}
