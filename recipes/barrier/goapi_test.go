package barrier_test

import (
	"errors"
	"testing"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/recipes/barrier"
)

// newDouble is barrier.NewDouble for arguments that are right.
func newDouble(t *testing.T, conn zksim.Conn, dir string, size int) *barrier.DoubleBarrier {
	t.Helper()
	b, err := barrier.NewDouble(conn, dir, size)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// newStart is barrier.NewStart for arguments that are right.
func newStart(t *testing.T, conn zksim.Conn, dir string, size int) *barrier.StartBarrier {
	t.Helper()
	b, err := barrier.NewStart(conn, dir, size)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestConstructorsBadArguments(t *testing.T) {
	for _, tc := range []struct {
		dir  string
		size int
	}{{"/b", 0}, {"/b", -1}, {"b", 2}, {"/b/", 2}, {"", 1}} {
		d, err := barrier.NewDouble(nil, tc.dir, tc.size)
		if !errors.Is(err, zksim.ErrBadArguments) || d != nil {
			t.Errorf("NewDouble(%q, %d) = %v, %v; want nil, ErrBadArguments", tc.dir, tc.size, d, err)
		}
		s, err := barrier.NewStart(nil, tc.dir, tc.size)
		if !errors.Is(err, zksim.ErrBadArguments) || s != nil {
			t.Errorf("NewStart(%q, %d) = %v, %v; want nil, ErrBadArguments", tc.dir, tc.size, s, err)
		}
	}
	if _, err := barrier.NewDouble(nil, "/b", 1); err != nil {
		t.Errorf("NewDouble of one member: %v", err)
	}
}
