package recipes_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/recipes"
	"github.com/zksim/zksim/zkmem"
)

// faultyConn applies a Create and then answers as fail says, as if the
// reply had been lost (ErrConnectionLoss) or the caller had given up
// (context.Canceled): the node exists, the caller does not know it.
type faultyConn struct {
	zksim.Conn
	fails []error // the answers of the next Creates, in order
}

func (c *faultyConn) Create(ctx context.Context, path string, data []byte, mode zksim.CreateMode, acl []zksim.ACL) (string, error) {
	p, err := c.Conn.Create(ctx, path, data, mode, acl)
	if err == nil && len(c.fails) > 0 {
		err, c.fails = c.fails[0], c.fails[1:]
		return "", err
	}
	return p, err
}

func newConn(t *testing.T) *zkmem.Conn {
	t.Helper()
	srv := zkmem.NewServer(zkmem.Options{})
	t.Cleanup(srv.Close)
	conn, err := srv.Connect()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

func children(t *testing.T, conn zksim.Conn, dir string) []string {
	t.Helper()
	names, _, err := conn.Children(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(names)
	return names
}

func TestCreateProtected(t *testing.T) {
	defer goleak.VerifyNone(t)
	conn := newConn(t)
	ctx := t.Context()
	var got []string
	for range 2 {
		p, err := recipes.CreateProtectedEphemeralSequential(ctx, conn, "/app/jobs/job-", []byte("x"), zksim.OpenACL())
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, p)
	}
	for i, p := range got {
		name := strings.TrimPrefix(p, "/app/jobs/")
		if !strings.HasPrefix(name, "_c_") || name == p {
			t.Errorf("created %q: want /app/jobs/_c_<guid>-job-<seq>", p)
		}
		if seq, ok := recipes.SequenceOf(name, "job-"); !ok || int(seq) != i {
			t.Errorf("SequenceOf(%q) = %d, %v; want %d", name, seq, ok, i)
		}
		ok, st, err := conn.Exists(ctx, p)
		if err != nil || !ok || st.EphemeralOwner != conn.SessionID() {
			t.Errorf("%s: exists %v, stat %+v, %v; want ephemeral, ours", p, ok, st, err)
		}
	}
	if got[0][len("/app/jobs/_c_"):][:36] == got[1][len("/app/jobs/_c_"):][:36] {
		t.Error("two creates share a GUID")
	}
	// The root is a parent like any other.
	p, err := recipes.CreateProtectedEphemeralSequential(ctx, conn, "/top-", nil, zksim.OpenACL())
	if _, ok := recipes.SequenceOf(strings.TrimPrefix(p, "/"), "top-"); err != nil || !strings.HasPrefix(p, "/_c_") || !ok {
		t.Errorf("at the root: %q, %v", p, err)
	}
	if _, err := recipes.CreateProtectedEphemeralSequential(ctx, conn, "app/x-", nil, zksim.OpenACL()); !errors.Is(err, zksim.ErrBadArguments) {
		t.Errorf("relative path: %v, want ErrBadArguments", err)
	}
}

// TestCreateProtectedLostReply: the create is applied but its reply lost,
// twice in a row; the function finds its node by GUID and creates no
// second one.
func TestCreateProtectedLostReply(t *testing.T) {
	defer goleak.VerifyNone(t)
	conn := newConn(t)
	fc := &faultyConn{Conn: conn, fails: []error{zksim.ErrConnectionLoss}}
	p, err := recipes.CreateProtectedEphemeralSequential(t.Context(), fc, "/lock/lock-", nil, zksim.OpenACL())
	if err != nil {
		t.Fatal(err)
	}
	if names := children(t, conn, "/lock"); len(names) != 1 || "/lock/"+names[0] != p {
		t.Fatalf("after a lost reply: children %v, returned %q; want exactly the returned node", names, p)
	}
}

// TestCreateProtectedCleansUp: a create applied while the caller gave up
// (its ctx ended) leaves no node behind.
func TestCreateProtectedCleansUp(t *testing.T) {
	defer goleak.VerifyNone(t)
	conn := newConn(t)
	if _, err := conn.Create(t.Context(), "/lock", nil, zksim.ModePersistent, zksim.OpenACL()); err != nil {
		t.Fatal(err)
	}
	fc := &faultyConn{Conn: conn, fails: []error{context.Canceled}}
	_, err := recipes.CreateProtectedEphemeralSequential(t.Context(), fc, "/lock/lock-", nil, zksim.OpenACL())
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if names := children(t, conn, "/lock"); len(names) != 0 {
		t.Fatalf("left behind: %v", names)
	}
}

func TestCompareSequence(t *testing.T) {
	for _, tc := range []struct {
		a, b int32
		want int
	}{{1, 2, -1}, {2, 1, 1}, {5, 5, 0}, {2147483647, -2147483648, -1}, {-2147483648, 2147483647, 1}} {
		if got := recipes.CompareSequence(tc.a, tc.b); got != tc.want {
			t.Errorf("CompareSequence(%d, %d) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
	if _, ok := recipes.SequenceOf("_c_x-lock-0000000001", ""); ok {
		t.Error("SequenceOf with an empty name parses")
	}
}
