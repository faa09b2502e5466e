package gozk_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/zksim/zksim/gozk"
)

// Nothing listens on port 1: every dial is refused, and go-zookeeper would
// retry for ever.
var unreachable = []string{"127.0.0.1:1"}

// connectEnds runs Connect and returns its error, failing the test if
// Connect hangs (waitLimit is a guard against a hang, not a speed
// assertion) or succeeds.
func connectEnds(t *testing.T, ctx context.Context, opts ...gozk.Option) error {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		c, err := gozk.Connect(ctx, unreachable, opts...)
		if c != nil {
			_ = c.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("Connect to an unreachable server succeeded")
		}
		if !strings.Contains(err.Error(), unreachable[0]) {
			t.Errorf("error %q does not name the server tried", err)
		}
		return err
	case <-time.After(waitLimit):
		t.Fatalf("Connect to %v did not return within %v", unreachable, waitLimit)
		return nil
	}
}

func TestConnectEndsWithContext(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	err := connectEnds(t, ctx)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Connect: %v, want context.DeadlineExceeded", err)
	}
	if !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("error %q does not give the last failure", err)
	}
}

func TestConnectEndsWhenCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(500*time.Millisecond, cancel)
	if err := connectEnds(t, ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Connect: %v, want context.Canceled", err)
	}
}

func TestConnectTimeoutBoundsBackground(t *testing.T) {
	err := connectEnds(t, context.Background(), gozk.WithConnectTimeout(time.Second))
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "connect timeout (1s)") {
		t.Fatalf("Connect: %v, want the connect timeout's DeadlineExceeded", err)
	}
}
