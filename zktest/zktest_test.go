package zktest_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/zkmem"
	"github.com/zksim/zksim/zktest"
)

func TestMain(m *testing.M) { zktest.Main(m) }

// odd are settings unlike every default, so that a fact that does not reach
// one of the servers shows.
func odd() zkmem.Options {
	return zkmem.Options{
		TickTime:               50 * time.Millisecond,
		MinSessionTimeout:      300 * time.Millisecond,
		MaxSessionTimeout:      3 * time.Second,
		ExtendedTypes:          false,
		ContainerCheckInterval: 50 * time.Millisecond,
		MaxRequestBytes:        64 << 10,
	}
}

// TestFactsReachBothServers checks on each backend that the server runs
// with the settings Facts claim: the session timeout bounds, TTL nodes, the
// largest request and the container check interval; on the real server
// also the configuration it reports.
func TestFactsReachBothServers(t *testing.T) {
	zktest.Run(t, odd(), func(t *testing.T, b *zktest.Backend) {
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		defer cancel()
		if !reflect.DeepEqual(b.Facts, zktest.WithDefaults(odd())) {
			t.Fatalf("facts %+v, want %+v", b.Facts, zktest.WithDefaults(odd()))
		}
		connect := func(timeout time.Duration) zksim.Conn {
			t.Helper()
			c, err := b.Connect(ctx, timeout)
			if err != nil {
				t.Fatalf("connect: %v", err)
			}
			t.Cleanup(func() { _ = c.Close() })
			return c
		}
		if got := connect(time.Minute).SessionTimeout(); got != b.Facts.MaxSessionTimeout {
			t.Errorf("a minute's session granted %v, want the maximum %v", got, b.Facts.MaxSessionTimeout)
		}
		c := connect(10 * time.Millisecond)
		if got := c.SessionTimeout(); got != b.Facts.MinSessionTimeout {
			t.Errorf("a 10ms session granted %v, want the minimum %v", got, b.Facts.MinSessionTimeout)
		}
		c = connect(b.Facts.MaxSessionTimeout)

		_, err := c.CreateTTL(ctx, "/ttl", nil, zksim.ModePersistentWithTTL, zksim.OpenACL(), time.Hour)
		if !errors.Is(err, zksim.ErrUnimplemented) {
			t.Errorf("TTL create with TTL nodes off: %v, want ErrUnimplemented", err)
		}

		if _, err := c.Create(ctx, "/small", make([]byte, b.Facts.MaxRequestBytes-1024), zksim.ModePersistent, zksim.OpenACL()); err != nil {
			t.Errorf("create just under the request limit: %v", err)
		}
		_, err = c.Create(ctx, "/big", make([]byte, b.Facts.MaxRequestBytes+1), zksim.ModePersistent, zksim.OpenACL())
		if !errors.Is(err, zksim.ErrConnectionLoss) {
			t.Errorf("create over the request limit: %v, want ErrConnectionLoss", err)
		}

		c = connect(b.Facts.MaxSessionTimeout)
		mustCreate(t, ctx, c, "/container", zksim.ModeContainer)
		mustCreate(t, ctx, c, "/container/child", zksim.ModePersistent)
		if err := c.Delete(ctx, "/container/child", -1); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(100 * b.Facts.ContainerCheckInterval)
		for {
			ok, _, err := c.Exists(ctx, "/container")
			if err != nil {
				t.Fatal(err)
			}
			if !ok {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("empty container still there after %d check intervals", 100)
			}
			time.Sleep(b.Facts.ContainerCheckInterval / 5)
		}

		if b.Real != nil {
			conf, err := b.Real.FourLetterWord(ctx, "conf")
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{"tickTime=50\n", "minSessionTimeout=300\n", "maxSessionTimeout=3000\n"} {
				if !strings.Contains(conf, want) {
					t.Errorf("the real server's conf lacks %q:\n%s", want, conf)
				}
			}
		}
	})
}

// TestControls expires a session and cuts and restores another on each
// backend. The cut session may live long, so that a slow redial cannot
// expire it.
func TestControls(t *testing.T) {
	opts := zktest.FastOptions()
	opts.MaxSessionTimeout = 10 * time.Second
	zktest.Run(t, opts, func(t *testing.T, b *zktest.Backend) {
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		defer cancel()
		var conns []zksim.Conn
		for _, timeout := range []time.Duration{time.Second, b.Facts.MaxSessionTimeout, b.Facts.MaxSessionTimeout} {
			c, err := b.Connect(ctx, timeout)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = c.Close() })
			conns = append(conns, c)
		}
		victim, cut, observer := conns[0], conns[1], conns[2]
		mustCreate(t, ctx, victim, "/victim", zksim.ModeEphemeral)
		mustCreate(t, ctx, cut, "/cut", zksim.ModeEphemeral)

		if err := b.Expire(ctx, victim); err != nil {
			t.Fatalf("expire: %v", err)
		}
		if ok, _, err := observer.Exists(ctx, "/victim"); ok || err != nil {
			t.Errorf("the expired session's ephemeral: exists %v, %v", ok, err)
		}

		if err := b.Disconnect(ctx, cut); err != nil {
			t.Fatalf("disconnect: %v", err)
		}
		if st := cut.State(); st == zksim.StateConnected {
			t.Errorf("state after Disconnect %v", st)
		}
		if ok, _, err := observer.Exists(ctx, "/cut"); !ok || err != nil {
			t.Errorf("a disconnected live session's ephemeral: exists %v, %v", ok, err)
		}
		if err := b.Reconnect(ctx, cut); err != nil {
			t.Fatalf("reconnect: %v", err)
		}
		if _, _, err := cut.Exists(ctx, "/cut"); err != nil {
			t.Errorf("a call after Reconnect: %v", err)
		}

		if b.Mem != nil {
			if err := b.SetNextSequence(ctx, "/", 41); err != nil {
				t.Fatal(err)
			}
			got, err := observer.Create(ctx, "/s-", nil, zksim.ModePersistentSequential, zksim.OpenACL())
			if err != nil || got != "/s-0000000041" {
				t.Errorf("create after SetNextSequence(41): %q, %v", got, err)
			}
		} else if b.SetNextSequence != nil {
			t.Error("a real server with a SetNextSequence hook")
		}
	})
}

func TestServerOptionsWholeMilliseconds(t *testing.T) {
	if _, err := zktest.ServerOptions(zkmem.Options{TickTime: 1500 * time.Microsecond}); err == nil {
		t.Error("a 1.5ms tick accepted; a real server cannot be configured with it")
	}
	if _, err := zktest.ServerOptions(zkmem.Options{MinSessionTimeout: 10 * time.Second, MaxSessionTimeout: 5 * time.Second}); err == nil || !strings.Contains(err.Error(), "MinSessionTimeout") {
		t.Errorf("MinSessionTimeout above MaxSessionTimeout: %v, want an error naming MinSessionTimeout", err)
	}
	if _, err := zktest.ServerOptions(odd()); err != nil {
		t.Errorf("odd(): %v", err)
	}
}

func mustCreate(t *testing.T, ctx context.Context, c zksim.Conn, p string, mode zksim.CreateMode) {
	t.Helper()
	if _, err := c.Create(ctx, p, nil, mode, zksim.OpenACL()); err != nil {
		t.Fatalf("create %s: %v", p, err)
	}
}
