package zktest

import (
	"context"
	"errors"
	"testing"

	"github.com/zksim/zksim"
)

// WaitChildren blocks until dir has exactly n children (a missing dir has
// none), watching instead of polling. It fails the test if ctx ends first.
func WaitChildren(t *testing.T, ctx context.Context, conn zksim.Conn, dir string, n int) []string {
	t.Helper()
	for {
		children, _, w, err := conn.ChildrenW(ctx, dir)
		if errors.Is(err, zksim.ErrNoNode) {
			var exists bool
			exists, _, w, err = conn.ExistsW(ctx, dir)
			if err == nil && exists {
				continue
			}
			children = nil
		}
		if err != nil {
			t.Fatalf("waiting for %d children of %s: %v", n, dir, err)
		}
		if len(children) == n {
			return children
		}
		select {
		case <-w:
		case <-ctx.Done():
			t.Fatalf("waiting for %d children of %s (have %v): %v", n, dir, children, ctx.Err())
		}
	}
}

// Result is what a goroutine started by Go reports.
type Result[T any] struct {
	Val T
	Err error
}

// Go runs f in a goroutine and returns a channel that receives its result
// once. Tests use it to run a blocking call while they do something else,
// and Recv to collect it.
func Go[T any](f func() (T, error)) <-chan Result[T] {
	ch := make(chan Result[T], 1)
	go func() {
		v, err := f()
		ch <- Result[T]{v, err}
	}()
	return ch
}

// GoErr is Go for a function that returns only an error.
func GoErr(f func() error) <-chan Result[struct{}] {
	return Go(func() (struct{}, error) { return struct{}{}, f() })
}

// Recv returns the result on ch, failing the test if ctx ends first.
func Recv[T any](t *testing.T, ctx context.Context, ch <-chan Result[T]) Result[T] {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-ctx.Done():
		t.Fatalf("no result: %v", ctx.Err())
	}
	return Result[T]{}
}

// Pending fails the test if ch already has a result. Call it after Settle
// (zkmem) or after the event that must not have unblocked the call.
func Pending[T any](t *testing.T, ch <-chan Result[T], what string) {
	t.Helper()
	select {
	case r := <-ch:
		t.Fatalf("%s returned (%v, %v), want it still blocked", what, r.Val, r.Err)
	default:
	}
}
