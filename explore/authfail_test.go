package explore

import (
	"context"
	"maps"
	"testing"

	"github.com/zksim/zksim"
)

// TestArmAuthCheckSkipsOperationsOfALeftSession: when the client a
// process runs on now is armed to fail authentication, only the
// operations that began on that client are held to the auth-failure check
// (checkAuthOutcome). An operation begun on a session the process's
// Renewing has left since works for that session: holding it to the check
// reports "auth failure ignored" when it returns nil, a false positive
// (random exploration of the election machine found one, with the
// condition left out).
func TestArmAuthCheckSkipsOperationsOfALeftSession(t *testing.T) {
	nop := context.CancelFunc(func() {})
	c := &client{
		running: map[string]context.CancelFunc{
			"campaign": nop, // began on client 0, which the Renewing left
			"observe":  nop, // began on client 3, the one it runs on now
			"resign":   nop, // began on client 3 too
		},
		startedOn: map[string]int{"campaign": 0, "observe": 3, "resign": 3, "leader": 3},
	}
	c.armAuthCheck(3)
	want := map[string]int{"observe": 3, "resign": 3}
	if !maps.Equal(c.authStruck, want) {
		t.Fatalf("operations held to the auth-failure check: %v, want %v (not campaign, begun on client 0; not leader, not running)", c.authStruck, want)
	}

}

// TestAuthFailureIgnoredOnlyOnceTheDropIsHeard: a nil from an operation
// whose client failed to authenticate is "auth failure ignored" once the
// process has heard the drop (or the failure), not while it still hears
// StateConnected: then the nil came from a reply the server sent before
// the connection dropped (property_test's findings25, TestBarrierEnsemble:
// a Remove's delete answered ErrNoNode on a member, its reply held by a
// Delay, the member crashed and the client's reconnection failed
// authentication within that step; the reply, ahead of the drop in the
// connection's FIFO, reached the client first).
func TestAuthFailureIgnoredOnlyOnceTheDropIsHeard(t *testing.T) {
	cases := []struct {
		err    error
		failed bool
		heard  zksim.State
		want   bool
	}{
		{nil, true, zksim.StateConnected, false}, // the finding: the reply preceded the drop
		{nil, true, zksim.StateDisconnected, true},
		{nil, true, zksim.StateAuthFailed, true},
		{zksim.ErrAuthFailed, true, zksim.StateAuthFailed, false},
		{zksim.ErrConnectionLoss, true, zksim.StateDisconnected, false},
		{nil, false, zksim.StateDisconnected, false},
		{nil, false, zksim.StateConnected, false},
	}
	for _, tc := range cases {
		if got := authFailureIgnored(tc.err, tc.failed, tc.heard); got != tc.want {
			t.Errorf("authFailureIgnored(%v, failed %v, heard %v) = %v, want %v", tc.err, tc.failed, tc.heard, got, tc.want)
		}
	}
}
