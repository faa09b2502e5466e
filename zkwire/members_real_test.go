package zkwire_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/zksim/zksim/zkserver"
)

// mntrRows parses mntr's answer into its rows, key to value.
func mntrRows(t *testing.T, out string) map[string]string {
	t.Helper()
	rows := map[string]string{}
	for l := range strings.Lines(out) {
		k, v, ok := strings.Cut(strings.TrimSuffix(l, "\n"), "\t")
		if !ok {
			t.Fatalf("mntr line %q has no tab", l)
		}
		rows[k] = v
	}
	return rows
}

// TestMemberWordsMatchRealEnsemble: on a 3-member ensemble, the leader's
// and a follower's srvr have the real 3.8 members' format (Mode: leader
// and follower, the leader's proposal sizes), isro answers alike, and
// every mntr row a member prints is one the real member prints, with the
// same value for its state, peer state, quorum size, learners, synced
// followers and observers, and pending syncs.
func TestMemberWordsMatchRealEnsemble(t *testing.T) {
	re := zkserver.StartEnsemble(t, 3)
	te := newTestEnsemble(t)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	leader, err := re.Leader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	follower := (leader + 1) % 3
	realWord := func(i int, w string) string {
		t.Helper()
		out, err := re.FourLetterWord(ctx, i, w)
		if err != nil {
			t.Fatalf("real member %d %s: %v", i, w, err)
		}
		return out
	}
	for _, tc := range []struct {
		role       string
		real, ours int
	}{{"leader", leader, 2}, {"follower", follower, 0}} {
		rs, ours := realWord(tc.real, "srvr"), word(t, te.Addr(tc.ours), "srvr")
		if !strings.Contains(rs, "\nMode: "+tc.role+"\n") || shape(ours) != shape(rs) {
			t.Errorf("%s's srvr:\n%s\nthe real one's:\n%s", tc.role, ours, rs)
		}
		if ri, oi := realWord(tc.real, "isro"), word(t, te.Addr(tc.ours), "isro"); oi != ri {
			t.Errorf("%s's isro %q, the real one's %q", tc.role, oi, ri)
		}
		rm, om := mntrRows(t, realWord(tc.real, "mntr")), mntrRows(t, word(t, te.Addr(tc.ours), "mntr"))
		for k := range om {
			if _, ok := rm[k]; !ok {
				t.Errorf("%s's mntr prints %s, which the real one does not", tc.role, k)
			}
		}
		for _, k := range []string{"zk_server_state", "zk_peer_state", "zk_quorum_size", "zk_learners",
			"zk_synced_followers", "zk_synced_non_voting_followers", "zk_synced_observers", "zk_pending_syncs",
			"zk_last_proposal_size", "zk_min_proposal_size", "zk_max_proposal_size"} {
			if om[k] != rm[k] {
				t.Errorf("%s's mntr %s = %q, the real one's %q", tc.role, k, om[k], rm[k])
			}
		}
	}
}
