package conformance

import (
	"github.com/stretchr/testify/require"

	"github.com/zksim/zksim"
)

// Path rules (PathUtils.validatePath). A real client checks every path
// before sending it (the Java client throws IllegalArgumentException;
// go-zookeeper returns ErrInvalidPath, which the adapter maps to
// ErrBadArguments), so a bad path fails with ErrBadArguments whatever else
// is wrong with the request. (Sent raw, without the client check, a real
// 3.8 server validates create paths only after the ACL, parent and
// permission checks and reads not at all; no client can observe that.)
func pathCases() []testCase {
	cases := []testCase{
		{"root-is-valid", func(e *env) {
			ok, st, err := e.c.Exists(e.ctx, "/")
			require.NoError(e.t, err)
			require.True(e.t, ok, "/ must exist")
			require.NotNil(e.t, st)
			_, _, err = e.c.Get(e.ctx, "/")
			require.NoError(e.t, err, "get /")
		}},
		{"accept-U+00E9", func(e *env) {
			e.create(e.c, e.p("caf\u00e9"), []byte("x"), zksim.ModePersistent)
			require.Equal(e.t, []string{"caf\u00e9"}, e.children(e.c, e.p()))
			require.Equal(e.t, []byte("x"), e.data(e.c, e.p("caf\u00e9")))
		}},
		{"accept-three-dots", func(e *env) {
			e.create(e.c, e.p("..."), nil, zksim.ModePersistent)
			e.create(e.c, e.p("...", "...."), nil, zksim.ModePersistent)
			require.Equal(e.t, []string{"...."}, e.children(e.c, e.p("...")))
		}},
		{"accept-dots-inside-names", func(e *env) {
			for _, name := range []string{".a", "a.", "a..b", ".hidden.."} {
				e.create(e.c, e.p(name), nil, zksim.ModePersistent)
			}
			require.Equal(e.t, []string{".a", ".hidden..", "a.", "a..b"}, e.children(e.c, e.p()))
		}},
		{"accept-punctuation-and-space", func(e *env) {
			for _, name := range []string{"a b", "a:b", "a-b_c", "a@b=c", "~"} {
				e.create(e.c, e.p(name), nil, zksim.ModePersistent)
			}
			require.Len(e.t, e.children(e.c, e.p()), 5)
		}},
		{"accept-range-boundaries", func(e *env) {
			// The characters just outside each rejected range are fine.
			names := []string{"a\u0020", "a\u007e", "a\u00a0", "a\ud7ff", "a\uf900", "a\uffef"}
			for _, name := range names {
				e.create(e.c, e.p(name), nil, zksim.ModePersistent)
			}
			require.Equal(e.t, sorted(names), e.children(e.c, e.p()))
		}},
		{"sequential-trailing-slash-allowed", func(e *env) {
			// A sequential create validates path+"1".
			got := e.create(e.c, e.p()+"/", nil, zksim.ModePersistentSequential)
			require.Equal(e.t, e.p("0000000000"), got)
		}},
		{"sequential-double-slash-rejected", func(e *env) {
			_, err := e.c.Create(e.ctx, e.p()+"//", nil, zksim.ModePersistentSequential, zksim.OpenACL())
			e.is(err, zksim.ErrBadArguments, "sequential create %s//", e.p())
			require.Empty(e.t, e.children(e.c, e.p()))
		}},
		{"sequential-bad-character-rejected", func(e *env) {
			_, err := e.c.Create(e.ctx, e.p("a\u0001-"), nil, zksim.ModePersistentSequential, zksim.OpenACL())
			e.is(err, zksim.ErrBadArguments, "sequential create with U+0001")
			require.Empty(e.t, e.children(e.c, e.p()))
		}},
		{"sequential-dot-name-allowed", func(e *env) {
			// A sequential create validates path+"1", so "/r/." is checked
			// as "/r/.1" and is valid; the node is "/r/.0000000000".
			got := e.create(e.c, e.p("."), nil, zksim.ModePersistentSequential)
			require.Equal(e.t, e.p(".0000000000"), got)
		}},
		{"bad-path-beats-invalid-acl", func(e *env) {
			_, err := e.c.Create(e.ctx, e.p("a")+"/", nil, zksim.ModePersistent, nil)
			e.is(err, zksim.ErrBadArguments, "create with a trailing / and an empty ACL")
		}},
		{"bad-path-beats-no-node", func(e *env) {
			_, err := e.c.Create(e.ctx, e.p("missing", "a")+"/", nil, zksim.ModePersistent, zksim.OpenACL())
			e.is(err, zksim.ErrBadArguments, "create with a trailing / under a missing parent")
		}},
		{"bad-path-beats-node-exists", func(e *env) {
			_, err := e.c.Create(e.ctx, e.p()+"/", nil, zksim.ModePersistent, zksim.OpenACL())
			e.is(err, zksim.ErrBadArguments, "create %s/ where %s exists", e.p(), e.p())
		}},
	}
	cases = append(cases, rejectedPathCases()...)
	cases = append(cases, everyOpRejectsBadPathCases()...)
	return cases
}

// badPath is a path the server rejects, relative to a case root.
type badPath struct {
	name string
	path func(root string) string
}

func rejectedPaths() []badPath {
	under := func(suffix string) func(string) string {
		return func(root string) string { return root + suffix }
	}
	return []badPath{
		{"empty", func(string) string { return "" }},
		{"relative", func(root string) string { return root[1:] + "/a" }},
		{"trailing-slash", under("/a/")},
		{"double-slash", under("//a")},
		{"dot", under("/.")},
		{"dotdot", under("/..")},
		{"dot-inside", under("/./a")},
		{"dotdot-inside", under("/../a")},
		{"U+0000", under("/a\u0000b")},
		{"U+0001", under("/a\u0001")},
		{"U+001F", under("/a\u001f")},
		{"U+007F", under("/a\u007f")},
		{"U+0080", under("/a\u0080")},
		{"U+009F", under("/a\u009f")},
		{"U+E000", under("/a\ue000")},
		{"U+F8FF", under("/a\uf8ff")},
		{"U+FFF0", under("/a\ufff0")},
		{"U+FFFF", under("/a\uffff")},
		{"emoji-U+1F600", under("/a\U0001F600")},
		{"U+10000", under("/a\U00010000")},
		{"invalid-utf8", under("/a\xff")},
		{"surrogate-U+D800-bytes", under("/a\xed\xa0\x80")},
	}
}

// rejectedPathCases creates each bad path: ErrBadArguments, nothing made.
func rejectedPathCases() []testCase {
	var cases []testCase
	for _, bp := range rejectedPaths() {
		cases = append(cases, testCase{"reject-" + bp.name, func(e *env) {
			p := bp.path(e.p())
			_, err := e.c.Create(e.ctx, p, []byte("x"), zksim.ModePersistent, zksim.OpenACL())
			e.is(err, zksim.ErrBadArguments, "create %q", p)
			require.Empty(e.t, e.children(e.c, e.p()), "a rejected create made a node")
		}})
	}
	return cases
}

// everyOpRejectsBadPathCases checks each operation with two bad paths, in
// two cases: one that go-zookeeper catches itself (a trailing /) and one
// that only the full rules reject (an emoji: a supplementary character). A
// real server sent the emoji path raw validates it for create, setData and
// setACL only (checked: getData and delete answer NoNode, exists and sync
// succeed), so a client must check it first, as the Java client does.
func everyOpRejectsBadPathCases() []testCase {
	ops := []struct {
		name string
		call func(e *env, p string) error
	}{
		{"delete", func(e *env, p string) error { return e.c.Delete(e.ctx, p, -1) }},
		{"exists", func(e *env, p string) error { _, _, err := e.c.Exists(e.ctx, p); return err }},
		{"exists-watch", func(e *env, p string) error { _, _, _, err := e.c.ExistsW(e.ctx, p); return err }},
		{"get", func(e *env, p string) error { _, _, err := e.c.Get(e.ctx, p); return err }},
		{"get-watch", func(e *env, p string) error { _, _, _, err := e.c.GetW(e.ctx, p); return err }},
		{"set", func(e *env, p string) error { _, err := e.c.Set(e.ctx, p, nil, -1); return err }},
		{"children", func(e *env, p string) error { _, _, err := e.c.Children(e.ctx, p); return err }},
		{"children-watch", func(e *env, p string) error { _, _, _, err := e.c.ChildrenW(e.ctx, p); return err }},
		{"get-acl", func(e *env, p string) error { _, _, err := e.c.GetACL(e.ctx, p); return err }},
		{"set-acl", func(e *env, p string) error { _, err := e.c.SetACL(e.ctx, p, zksim.OpenACL(), -1); return err }},
		{"sync", func(e *env, p string) error { _, err := e.c.Sync(e.ctx, p); return err }},
	}
	paths := []struct {
		name string
		path func(e *env) string
	}{
		{"trailing-slash", func(e *env) string { return e.p("a") + "/" }},
		{"emoji", func(e *env) string { return e.p("a\U0001F600") }},
	}
	var cases []testCase
	for _, op := range ops {
		for _, bp := range paths {
			cases = append(cases, testCase{op.name + "-rejects-" + bp.name, func(e *env) {
				p := bp.path(e)
				e.is(op.call(e, p), zksim.ErrBadArguments, "%s %q", op.name, p)
			}})
		}
	}
	return cases
}
