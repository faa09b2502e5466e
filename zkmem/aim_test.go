package zkmem_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/zkmem"
)

// TestArmAimedByPathAndCount: a fault armed for op create under
// /app/lock/ hits the next two lock-node creates only: not the create of
// /app/lock itself, nor a create elsewhere, nor a getData under it; each
// hit takes one off its count, and Info says how many are left.
func TestArmAimedByPathAndCount(t *testing.T) {
	srv := zkmem.NewServer(zkmem.Options{TickTime: time.Second})
	defer srv.Close()
	c, err := srv.Connect(zkmem.WithSessionTimeout(5*time.Second), zkmem.WithReconnectDelay(time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	ctl := srv.Control(c.SessionID())
	if err := ctl.Arm(zkmem.LoseReply, zkmem.Aim{Op: zkmem.OpCreate, Path: "/app/lock/", Count: 2}); err != nil {
		t.Fatal(err)
	}
	create := func(p string) error {
		t.Helper()
		// The Conn is down for its reconnect delay after a lost reply.
		for deadline := time.Now().Add(5 * time.Second); !ctl.Info().Connected; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("the Conn did not reconnect")
			}
		}
		_, err := c.Create(ctx, p, nil, zksim.ModePersistent, zksim.OpenACL())
		return err
	}
	armed := func(want int) {
		t.Helper()
		got := ctl.Info().Armed
		if want == 0 {
			if len(got) != 0 {
				t.Fatalf("armed %+v, want none", got)
			}
			return
		}
		w := []zkmem.ArmedFault{{Op: zkmem.OpCreate, Path: "/app/lock/", Count: want, Fault: zkmem.LoseReply}}
		if !slices.Equal(got, w) {
			t.Fatalf("armed %+v, want %+v", got, w)
		}
	}
	for _, p := range []string{"/app", "/app/lock", "/app/locks", "/other"} {
		if err := create(p); err != nil {
			t.Fatalf("create %s, not aimed at: %v", p, err)
		}
	}
	if _, _, err := c.Get(ctx, "/app/lock"); err != nil {
		t.Fatal(err)
	}
	armed(2)
	if err := create("/app/lock/a"); !errors.Is(err, zksim.ErrConnectionLoss) {
		t.Fatalf("first aimed create: %v, want connection loss", err)
	}
	armed(1)
	if err := create("/app/lock/b"); !errors.Is(err, zksim.ErrConnectionLoss) {
		t.Fatalf("second aimed create: %v, want connection loss", err)
	}
	armed(0)
	if err := create("/app/lock/c"); err != nil {
		t.Fatalf("third create, past the count: %v", err)
	}
	// The replies were lost, the creates applied.
	kids, _, err := c.Children(ctx, "/app/lock")
	slices.Sort(kids)
	if err != nil || !slices.Equal(kids, []string{"a", "b", "c"}) {
		t.Fatalf("children of /app/lock: %v, %v", kids, err)
	}
}

// TestArmRefusesBadAim: Arm names the bad field and arms nothing.
func TestArmRefusesBadAim(t *testing.T) {
	srv := zkmem.NewServer(zkmem.Options{})
	defer srv.Close()
	c, err := srv.Connect()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctl := srv.Control(c.SessionID())
	for _, tc := range []struct {
		f    zkmem.ConnFault
		a    zkmem.Aim
		want string
	}{
		{zkmem.LoseReply, zkmem.Aim{Path: "app", Count: 1}, `Aim.Path "app"`},
		{zkmem.DropRequest, zkmem.Aim{Count: 0}, "Aim.Count 0"},
		{zkmem.LoseReply, zkmem.Aim{Count: -3}, "Aim.Count -3"},
		{zkmem.NoFault, zkmem.Aim{Count: 1}, "fault NoFault"},
	} {
		err := ctl.Arm(tc.f, tc.a)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Arm(%v, %+v) = %v, want an error naming %s", tc.f, tc.a, err, tc.want)
		}
	}
	if got := ctl.Info().Armed; got != nil {
		t.Fatalf("armed %+v after refused Arms", got)
	}
}
