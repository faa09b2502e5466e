package history

import (
	"fmt"
	"hash/fnv"
	"sort"
	"strings"

	"github.com/anishathalye/porcupine"
	"github.com/zksim/zksim"
)

// node is the model's state of one path.
type node struct {
	exists  bool
	data    string // dkey
	version int32
	czxid   int64 // 0: unknown
	last    int64 // the highest known zxid of a write applied to the path
}

// wInput is a write as the model sees it: the call, and what is known of
// its result.
type wInput struct {
	op      int
	kind    Kind
	data    string
	version int32 // expected version
	outcome Outcome
	code    error // the error of a Failed write
	zxid    int64 // known zxid, or 0
	czxid   int64 // known czxid of the node after a Set, or 0
	result  int32 // known version of the node after a Set, or -1
}

// apply applies in to s as if it succeeded; it returns the error the
// server would answer instead, or the new state.
func apply(s node, in *wInput) (node, error) {
	switch in.kind {
	case Create:
		if s.exists {
			return s, zksim.ErrNodeExists
		}
		return node{exists: true, data: in.data, czxid: in.zxid, last: s.last}, nil
	case Set:
		if !s.exists {
			return s, zksim.ErrNoNode
		}
		if in.version != -1 && in.version != s.version {
			return s, zksim.ErrBadVersion
		}
		s.data = in.data
		s.version++
		return s, nil
	default: // Delete
		if !s.exists {
			return s, zksim.ErrNoNode
		}
		if in.version != -1 && in.version != s.version {
			return s, zksim.ErrBadVersion
		}
		return node{last: s.last}, nil
	}
}

// consistent reports whether a write that produced ns from s agrees with
// what is known of its result, and returns ns with the zxids it learned.
func consistent(s, ns node, in *wInput) (node, bool) {
	if in.zxid != 0 {
		if in.zxid <= s.last {
			return ns, false
		}
		ns.last = in.zxid
	}
	if in.kind == Set {
		if in.result >= 0 && in.result != ns.version {
			return ns, false
		}
		if in.czxid != 0 {
			if s.czxid != 0 && s.czxid != in.czxid {
				return ns, false
			}
			ns.czxid = in.czxid
		}
	}
	return ns, true
}

func step(state, input, output any) []any {
	s := state.(node)
	in := input.(*wInput)
	ns, refused := apply(s, in)
	switch in.outcome {
	case OK:
		if refused != nil {
			return nil
		}
		if ns, ok := consistent(s, ns, in); ok {
			return []any{ns}
		}
		return nil
	case Failed:
		switch {
		case in.code == zksim.ErrNoNode || in.code == zksim.ErrNodeExists || in.code == zksim.ErrBadVersion:
			if refused == in.code {
				return []any{s}
			}
			return nil
		default: // an error the model does not decide (NoAuth, ...): no effect
			return []any{s}
		}
	default: // Unknown: applied or not
		states := []any{s}
		if refused == nil {
			if ns, ok := consistent(s, ns, in); ok {
				states = append(states, ns)
			}
		}
		return states
	}
}

// newModel returns the model of one znode per path, describing operations
// with ops.
func newModel(ops []Op) porcupine.NondeterministicModel {
	return porcupine.NondeterministicModel{
		Partition: func(h []porcupine.Operation) [][]porcupine.Operation {
			byPath := map[string][]porcupine.Operation{}
			var paths []string
			for _, op := range h {
				p := op.Metadata.(string)
				if _, ok := byPath[p]; !ok {
					paths = append(paths, p)
				}
				byPath[p] = append(byPath[p], op)
			}
			sort.Strings(paths)
			out := make([][]porcupine.Operation, len(paths))
			for i, p := range paths {
				out[i] = byPath[p]
			}
			return out
		},
		Init: func() []any { return []any{node{}} },
		Step: step,
		Hash: func(state any) uint64 {
			s := state.(node)
			h := fnv.New64a()
			fmt.Fprintf(h, "%t|%s|%d|%d|%d", s.exists, s.data, s.version, s.czxid, s.last)
			return h.Sum64()
		},
		DescribeOperation: func(input, output any) string {
			return ops[input.(*wInput).op].String()
		},
		DescribeState: func(state any) string {
			s := state.(node)
			if !s.exists {
				return "absent"
			}
			return fmt.Sprintf("%q version %d", s.data[1:], s.version)
		},
	}
}

// porcupineHistory returns the writes as porcupine operations.
func (c *checker) porcupineHistory() []porcupine.Operation {
	var h []porcupine.Operation
	for i := range c.ops {
		op := &c.ops[i]
		if !op.Kind.IsWrite() {
			continue
		}
		in := &wInput{op: i, kind: op.Kind, data: dkey(op.Data), version: op.Version, outcome: c.out[i],
			zxid: c.zx[i], czxid: c.czx[i], result: c.version[i]}
		if in.outcome == Failed {
			for _, e := range []error{zksim.ErrNoNode, zksim.ErrNodeExists, zksim.ErrBadVersion} {
				if op.is(e) {
					in.code = e
				}
			}
		}
		ret := c.returned(i) // Pending if it may take effect at any time after its call
		h = append(h, porcupine.Operation{ClientId: op.Client, Input: in, Call: op.Invoked, Return: ret, Metadata: op.Path})
	}
	return h
}

// checkWrites checks that the writes are linearizable, path by path.
func (c *checker) checkWrites() {
	h := c.porcupineHistory()
	if len(h) == 0 {
		return
	}
	model := newModel(c.ops)
	m := model.ToModel()
	res, info := porcupine.CheckOperationsVerbose(m, h, 0)
	if res == porcupine.Ok {
		return
	}
	// Report each path whose writes cannot be linearized.
	parts := model.Partition(h)
	lins := info.PartialLinearizations()
	for pi, part := range parts {
		if porcupine.CheckOperations(m, part) {
			continue
		}
		var idx []int
		for _, op := range part {
			idx = append(idx, op.Input.(*wInput).op)
		}
		sort.Ints(idx)
		longest := []int{}
		if pi < len(lins) {
			for _, l := range lins[pi] {
				if len(l) > len(longest) {
					longest = l
				}
			}
		}
		var names []string
		for _, j := range longest {
			names = append(names, fmt.Sprintf("#%d", c.ops[part[j].Input.(*wInput).op].ID))
		}
		path := part[0].Metadata.(string)
		c.violate(Linearizable, -1, fmt.Sprintf("no order of the %d writes on %s, consistent with real time, explains their results (the longest order that does: [%s]); the writes:", len(part), path, strings.Join(names, " ")), idx...)
	}
}
