package explore

import (
	"strings"

	"pgregory.net/rapid"

	"github.com/zksim/zksim/recipes/election"
)

// The Election machine on one server draws the layout of its candidates
// (election.WithLayout): zksim's own, Curator's LeaderLatch or
// LeaderSelector, or kazoo's, each ordering the candidates its way
// (recipes/internal/seqnode's Layout.Order). Every election value of the
// check takes the drawn layout, so all candidates share it, as the doc
// requires. The other layouts order by the text of the sequence, which is
// not the creation order after the int32 wrap, where a candidate created
// just after the wrap leads at once beside the old leader (the package
// doc says so of all three libraries): with such a layout every sequence
// starts at 0, whatever the check drew for the wrap, and the
// machine sorts the candidates by sequence as for its own layout. The
// Curator layouts take every child of the directory in line, and kazoo's
// refuses the _c_ names the Resume action and junk use, so those two
// actions run only in zksim's layout. (The ensemble machine keeps zksim's
// layout and draws nothing: its committed fail files replay as before.)

// electionLayouts are the layouts drawn, with the name of a candidate node.
var electionLayouts = []election.Layout{election.Zksim, election.CuratorLatch, election.CuratorSelector, election.Kazoo}

// drawElectionLayout draws f's election layout, on one server only.
func drawElectionLayout(f *lockFamily, t *rapid.T) *lockFamily {
	a, ok := f.api.(*electionAPI)
	w := f.w
	if !ok || a.single || w.cfg.members > 0 {
		return f
	}
	a.layout = rapid.SampledFrom(electionLayouts).Draw(t, "layout")
	if a.layout == election.Zksim {
		return f
	}
	// (The directory may be deleted and made again: no node starts its
	// sequence next to the wrap.)
	w.sw.Server().SetSequenceStart(nil)
	w.trace("the candidates follow the %v layout (sequences from 0)", a.layout)
	return f
}

// marker is the name before the sequence in a candidate node's name.
func (a *electionAPI) marker() string {
	switch a.layout {
	case election.CuratorLatch:
		return "latch-"
	case election.CuratorSelector:
		return "lock-"
	case election.Kazoo:
		return "__lock__"
	}
	return election.CandidateName
}

// ownLayout reports whether the candidates follow zksim's layout.
func (a *electionAPI) ownLayout() bool { return a.layout == election.Zksim }

// opts are the options of every election value the machine makes.
func (a *electionAPI) opts(more ...election.Option) []election.Option {
	return append([]election.Option{election.WithLayout(a.layout)}, more...)
}

// candidate parses a candidate node's name strictly: the layout's marker
// and the sequence number exactly as the server formats it.
func (a *electionAPI) candidate(name string) (seqNode, bool) {
	m := a.marker()
	i := strings.LastIndex(name, m)
	if i < 0 || !candidateSeq.MatchString(name[i+len(m):]) {
		return seqNode{}, false
	}
	return parseSeqNode(name, m)
}
