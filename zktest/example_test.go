package zktest_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/conformance"
	"github.com/zksim/zksim/zkmem"
	"github.com/zksim/zksim/zktest"
)

// Run the conformance suite on zkmem and on a real ZooKeeper, both
// configured by the same options.
func ExampleRun() {
	var t *testing.T // the test's own
	zktest.Run(t, zktest.FastOptions(), func(t *testing.T, b *zktest.Backend) {
		conformance.Run(t, conformance.Backend{Backend: *b})
	})
}

// A zkmem server as a Backend: sessions are clamped to the server's
// bounds, and the controls act on the sessions Connect opened.
func ExampleMem() {
	srv := zkmem.NewServer(zktest.FastOptions())
	defer srv.Close()
	b := zktest.Mem(srv)
	ctx := context.Background()

	c, err := b.Connect(ctx, time.Minute)
	if err != nil {
		panic(err)
	}
	defer c.Close()
	fmt.Println(b.Name, "granted", c.SessionTimeout(), "of at most", b.Facts.MaxSessionTimeout)

	if _, err := c.Create(ctx, "/leader", nil, zksim.ModeEphemeral, zksim.OpenACL()); err != nil {
		panic(err)
	}
	if err := b.Expire(ctx, c); err != nil {
		panic(err)
	}
	other, err := b.Connect(ctx, time.Second)
	if err != nil {
		panic(err)
	}
	defer other.Close()
	ok, _, err := other.Exists(ctx, "/leader")
	fmt.Println("leader node after expiry:", ok, err)
	// Output:
	// zkmem granted 2s of at most 2s
	// leader node after expiry: false <nil>
}

// The facts of a server configured with nothing but a tick time: zkmem
// fills in ZooKeeper's defaults, and a real server started with
// ServerOptions gets the same values.
func ExampleWithDefaults() {
	f := zktest.WithDefaults(zkmem.Options{TickTime: 100 * time.Millisecond})
	fmt.Println("tick", f.TickTime, "sessions", f.MinSessionTimeout, "to", f.MaxSessionTimeout)
	fmt.Println("TTL nodes", f.ExtendedTypes, "reaped every", f.ContainerCheckInterval, "max request", f.MaxRequestBytes)
	// Output:
	// tick 100ms sessions 200ms to 2s
	// TTL nodes false reaped every 1m0s max request 1048575
}

// Table-driven cases, as the recipes use them: the shared cases run on
// both backends, the fault cases on zkmem only, where each runs in its own
// synctest bubble and a session expires on virtual time.
func ExampleRunMem() {
	cases := zktest.Cases{
		"CreateAndRead": func(t *testing.T, env *zktest.Env) {
			ctx, c := env.Ctx(t), env.Conn(t)
			if _, err := c.Create(ctx, env.Root, []byte("x"), zksim.ModePersistent, zksim.OpenACL()); err != nil {
				t.Fatal(err)
			}
		},
	}
	faultCases := zktest.Cases{
		"EphemeralGoesWithSession": func(t *testing.T, env *zktest.Env) {
			ctx, c, observer := env.Ctx(t), env.Conn(t), env.Conn(t)
			if _, err := c.Create(ctx, env.Root, nil, zksim.ModeEphemeral, zksim.OpenACL()); err != nil {
				t.Fatal(err)
			}
			if err := env.Expire(ctx, c); err != nil {
				t.Fatal(err)
			}
			if ok, _, err := observer.Exists(ctx, env.Root); ok || err != nil {
				t.Fatalf("after expiry: exists %v, %v", ok, err)
			}
		},
	}
	var t *testing.T // the test's own
	zktest.RunMem(t, cases.With(faultCases))
	zktest.RunReal(t, cases)
}
