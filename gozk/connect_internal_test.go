package gozk

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// TestConnectHasADefaultBound: with a context that never ends and no
// option, Connect still returns (after DefaultConnectTimeout, shortened
// here to keep the test short).
func TestConnectHasADefaultBound(t *testing.T) {
	old := defaultConnectTimeout
	defaultConnectTimeout = time.Second
	defer func() { defaultConnectTimeout = old }()
	done := make(chan error, 1)
	go func() {
		c, err := Connect(context.Background(), []string{"127.0.0.1:1"})
		if c != nil {
			_ = c.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "127.0.0.1:1") {
			t.Fatalf("Connect: %v, want DeadlineExceeded naming 127.0.0.1:1", err)
		}
		t.Logf("Connect: %v", err)
	case <-time.After(20 * time.Second): // a guard against a hang, not a speed assertion
		t.Fatal("Connect with context.Background() did not return")
	}
}
