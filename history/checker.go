package history

import (
	"fmt"
	"github.com/zksim/zksim"
	"slices"
	"sort"
)

// stateKey names one state of a node: its incarnation (czxid) and version.
type stateKey struct {
	path    string
	czxid   int64
	version int32
}

// stateInfo is what is known of one state of a node.
type stateInfo struct {
	mzxid   int64
	data    string // dkey of its data; "" when unknown
	src     int    // the op that reported it
	dataSrc int    // the op that reported its data
}

// checker holds a history being checked and what it learned.
type checker struct {
	ops []Op
	vio []Violation

	// per op (by index): the effective outcome (an Unknown write that a
	// read shows was applied becomes OK), the write's zxid (0: unknown)
	// and, for a Set, its resulting czxid and version (-1: unknown).
	out     []Outcome
	orig    []Outcome // out before reads showed unknown writes happened
	by      []int64   // see returned
	shownBy []int64   // the earliest return of a read that shows the write
	zx      []int64
	czx     []int64
	version []int32
	zxSrc   []int // the op that revealed zx

	// seen[i] is a lower bound of the zxid of the state op i observed or
	// produced (0: none); low[i] the highest zxid seen by an op that
	// returned before op i was invoked, lowSrc[i] that op (-1: none).
	seen   []int64
	low    []int64
	lowSrc []int

	writers map[string]map[string][]int // path -> dkey(data) -> create/set ops
	writes  map[string][]int            // path -> its writes, by index
	states  map[stateKey]*stateInfo
	// per path: the known czxids (sorted), and per incarnation the known
	// versions with their mzxids.
	acks         map[string]*acks // see lifecycle
	incarnations map[string][]int64
	versions     map[string]map[int64][]verZxid
}

type verZxid struct {
	version int32
	mzxid   int64
	src     int
}

// dkey turns data into a map key that keeps nil and empty apart.
func dkey(data []byte) string {
	if data == nil {
		return "\x00"
	}
	return "\x01" + string(data)
}

func newChecker(ops []Op) (*checker, error) {
	n := len(ops)
	c := &checker{
		ops: ops, out: make([]Outcome, n), zx: make([]int64, n), czx: make([]int64, n),
		version: make([]int32, n), zxSrc: make([]int, n), seen: make([]int64, n),
		low: make([]int64, n), lowSrc: make([]int, n),
		writers: map[string]map[string][]int{}, writes: map[string][]int{},
		states: map[stateKey]*stateInfo{}, incarnations: map[string][]int64{},
		versions: map[string]map[int64][]verZxid{},
	}
	for i := range ops {
		op := &ops[i]
		if op.Kind == Unsupported {
			return nil, fmt.Errorf("history: op %s: the checker has no model for it", op)
		}
		if op.Kind < Create || op.Kind > Sync {
			return nil, fmt.Errorf("history: op #%d: unknown kind %d", op.ID, op.Kind)
		}
		if op.Path == "" || op.Path[0] != '/' {
			return nil, fmt.Errorf("history: op %s: path %q is not absolute", op, op.Path)
		}
		if op.Returned != Pending && op.Returned <= op.Invoked {
			return nil, fmt.Errorf("history: op %s: returned at %d, not after it was invoked at %d", op, op.Returned, op.Invoked)
		}
		c.out[i] = op.Outcome()
		c.version[i] = -1
		c.zxSrc[i] = -1
		c.lowSrc[i] = -1
		if op.Kind.IsWrite() {
			c.writes[op.Path] = append(c.writes[op.Path], i)
		}
		if op.Kind == Create || op.Kind == Set {
			m := c.writers[op.Path]
			if m == nil {
				m = map[string][]int{}
				c.writers[op.Path] = m
			}
			m[dkey(op.Data)] = append(m[dkey(op.Data)], i)
		}
	}
	c.endedSessions()
	c.orig = slices.Clone(c.out)
	c.by = make([]int64, n)
	c.shownBy = make([]int64, n)
	for i := range c.shownBy {
		c.shownBy[i] = Pending
	}
	return c, nil
}

// ended reports whether op failed because its session had ended (expired,
// closed, or refused authentication).
func (op *Op) ended() bool {
	return op.is(zksim.ErrSessionExpired) || op.is(zksim.ErrClosing) || op.is(zksim.ErrAuthFailed)
}

// endedSessions marks as Failed the calls that a session refused after the
// client had already learned that it had ended: such a call never reached a
// server that could apply it. (The first call to learn it keeps its
// Unknown outcome: it may have been in flight.)
func (c *checker) endedSessions() {
	type key struct {
		client  int
		session int64
	}
	learned := map[key]int64{}
	for i := range c.ops {
		op := &c.ops[i]
		if op.ended() && op.Returned != Pending {
			k := key{op.Client, op.Session}
			if t, ok := learned[k]; !ok || op.Returned < t {
				learned[k] = op.Returned
			}
		}
	}
	for i := range c.ops {
		op := &c.ops[i]
		if t, ok := learned[key{op.Client, op.Session}]; ok && op.ended() && op.Invoked > t {
			c.out[i] = Failed
		}
	}
}

// acked reports whether op i was acknowledged (its call returned without
// error), as opposed to having been shown by a read to have taken effect.
func (c *checker) acked(i int) bool { return c.orig[i] == OK }

// returned is the time by which op i took effect if it ever did: when it
// returned, for an op whose outcome is known. An op of unknown outcome
// took effect, if at all, before a later write of its session returned
// (ZooKeeper applies a client's writes in the order it sent them, and the
// client sent the later one after it gave up on this one), and before a
// read that shows it returned; without either, at any time after its call
// (Pending).
func (c *checker) returned(i int) int64 { return c.by[i] }

// effectTimes computes returned for every op, once reads have shown which
// writes of unknown outcome happened (learn).
func (c *checker) effectTimes() {
	type key struct {
		client  int
		session int64
	}
	// the writes that reached the server, by session, in order of call
	reached := map[key][]int{}
	for i := range c.ops {
		op := &c.ops[i]
		c.by[i] = op.Returned
		if c.orig[i] == Unknown {
			c.by[i] = c.shownBy[i]
		}
		if op.Kind.IsWrite() && (c.orig[i] == OK || c.orig[i] == Failed && !op.ended()) {
			k := key{op.Client, op.Session}
			reached[k] = append(reached[k], i)
		}
	}
	for _, ws := range reached {
		sort.Slice(ws, func(a, b int) bool { return c.ops[ws[a]].Invoked < c.ops[ws[b]].Invoked })
	}
	for i := range c.ops {
		op := &c.ops[i]
		if c.orig[i] != Unknown || !op.Kind.IsWrite() || op.Returned == Pending {
			continue
		}
		ws := reached[key{op.Client, op.Session}]
		k := sort.Search(len(ws), func(k int) bool { return c.ops[ws[k]].Invoked > op.Returned })
		for ; k < len(ws); k++ {
			c.by[i] = min(c.by[i], c.ops[ws[k]].Returned)
		}
	}
}

func (c *checker) violate(rule Rule, client int, why string, ops ...int) {
	v := Violation{Rule: rule, Client: client, Why: why}
	for k, i := range ops {
		if i >= 0 && !slices.Contains(ops[:k], i) {
			v.Ops = append(v.Ops, c.ops[i])
		}
	}
	c.vio = append(c.vio, v)
}

// learnWrite records that write w produced state (czxid, version) at zxid
// mzxid, as op src reported.
func (c *checker) learnWrite(w int, zxid, czxid int64, version int32, src int) {
	if c.zx[w] != 0 && c.zx[w] != zxid {
		c.violate(ValueWritten, -1, fmt.Sprintf("two reports disagree on the zxid of one write: %#x and %#x", c.zx[w], zxid), w, c.zxSrc[w], src)
		return
	}
	c.zx[w], c.czx[w], c.version[w] = zxid, czxid, version
	if c.ops[src].Kind.IsRead() {
		c.shownBy[w] = min(c.shownBy[w], c.ops[src].Returned)
	}
	if c.zxSrc[w] < 0 {
		c.zxSrc[w] = src
	}
	if c.out[w] == Unknown {
		c.out[w] = OK // a read shows it took effect
	}
}

// learnState records a state of path as op src reported it (data "" when
// the report has none).
func (c *checker) learnState(path string, czxid, mzxid int64, version int32, data string, src int) {
	k := stateKey{path, czxid, version}
	s := c.states[k]
	if s == nil {
		c.states[k] = &stateInfo{mzxid: mzxid, data: data, src: src, dataSrc: src}
		if data == "" {
			c.states[k].dataSrc = -1
		}
		return
	}
	if s.mzxid != mzxid {
		c.violate(ValueWritten, -1, fmt.Sprintf("two reports of %s version %d (czxid %#x) disagree on its mzxid", path, version, czxid), src, s.src)
	}
	if data != "" {
		if s.data == "" {
			s.data, s.dataSrc = data, src
		} else if s.data != data {
			c.violate(ValueWritten, -1, fmt.Sprintf("two reports of %s version %d (czxid %#x) disagree on its data", path, version, czxid), src, s.dataSrc)
		}
	}
}

// learn ties reads to the writes they show, and gathers the states of
// every node that Stats report.
func (c *checker) learn() {
	for i := range c.ops {
		op := &c.ops[i]
		if op.Kind == Set && c.out[i] == OK && op.Result.Stat != nil {
			st := op.Result.Stat
			c.learnWrite(i, st.Mzxid, st.Czxid, st.Version, i)
			c.learnState(op.Path, st.Czxid, st.Mzxid, st.Version, dkey(op.Data), i)
		}
	}
	for i := range c.ops {
		op := &c.ops[i]
		st := op.Result.Stat
		if c.out[i] != OK || st == nil || !(op.Kind == Get || op.Kind == Exists && op.Result.Exists) {
			continue
		}
		data := ""
		if op.Kind == Get {
			data = dkey(op.Result.Data)
		}
		c.learnState(op.Path, st.Czxid, st.Mzxid, st.Version, data, i)
		if op.Kind != Get {
			continue
		}
		ws := c.writers[op.Path][data]
		switch {
		case len(ws) == 0:
			c.violate(ValueWritten, op.Client, fmt.Sprintf("read %s from %s, data no write wrote there", quote(op.Result.Data), op.Path), i)
		case len(ws) == 1:
			w := ws[0]
			if c.out[w] == Failed {
				c.violate(ValueWritten, op.Client, "read data that only a failed write wrote", i, w)
				continue
			}
			if c.ops[w].Kind == Create {
				if st.Version != 0 || st.Mzxid != st.Czxid {
					c.violate(ValueWritten, op.Client, fmt.Sprintf("read the data of a create at version %d (mzxid %#x, czxid %#x), after a set that wrote it again, though no set wrote it", st.Version, st.Mzxid, st.Czxid), i, w)
					continue
				}
				c.learnWrite(w, st.Czxid, st.Czxid, 0, i)
			} else {
				c.learnWrite(w, st.Mzxid, st.Czxid, st.Version, i)
			}
		}
	}
	for k, s := range c.states {
		vs := c.versions[k.path]
		if vs == nil {
			vs = map[int64][]verZxid{}
			c.versions[k.path] = vs
		}
		if len(vs[k.czxid]) == 0 {
			c.incarnations[k.path] = append(c.incarnations[k.path], k.czxid)
		}
		vs[k.czxid] = append(vs[k.czxid], verZxid{k.version, s.mzxid, s.src})
	}
	for p, cs := range c.incarnations {
		slices.Sort(cs)
		for _, vs := range c.versions[p] {
			sort.Slice(vs, func(a, b int) bool { return vs[a].version < vs[b].version })
		}
	}
}
