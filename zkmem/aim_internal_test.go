package zkmem

import (
	"testing"

	"github.com/zksim/zksim"
)

// TestAimMatches: which requests an Aim picks, by op and by path.
func TestAimMatches(t *testing.T) {
	create := func(p string) *Request { return &Request{Op: OpCreate, Path: p} }
	multi := &Request{Op: OpMulti, Path: "/a", Ops: []zksim.Op{&zksim.CheckOp{Path: "/a"}, &zksim.CreateOp{Path: "/app/lock/n-"}}}
	for _, tc := range []struct {
		aim  Aim
		req  *Request
		want bool
	}{
		{Aim{}, create("/x"), true},
		{Aim{}, &Request{Op: OpPing}, false},
		{Aim{Op: OpPing}, &Request{Op: OpPing}, true},
		{Aim{Op: OpGetData}, create("/x"), false},
		{Aim{Path: "/app/lock"}, create("/app/lock"), true},
		{Aim{Path: "/app/lock"}, create("/app/lock/x-"), true},
		{Aim{Path: "/app/lock"}, create("/app/locks"), false},
		{Aim{Path: "/app/lock"}, create("/app"), false},
		{Aim{Path: "/app/lock/"}, create("/app/lock"), false},
		{Aim{Path: "/app/lock/"}, create("/app/lock/x-"), true},
		{Aim{Path: "/app/lock/"}, create("/app/lock/"), false},
		{Aim{Path: "/"}, create("/"), false},
		{Aim{Path: "/"}, create("/a"), true},
		{Aim{Path: "/a"}, &Request{Op: OpAddAuth}, false},
		{Aim{Path: "/app/lock/"}, multi, true},
		{Aim{Op: OpMulti, Path: "/b"}, multi, false},
		{Aim{Op: OpCreate, Path: "/app/lock/"}, multi, false},
	} {
		if got := tc.aim.matches(tc.req); got != tc.want {
			t.Errorf("%+v matches %v: %v, want %v", tc.aim, tc.req, got, tc.want)
		}
	}
}
