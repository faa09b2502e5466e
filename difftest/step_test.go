package difftest

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/zksim/zksim"
)

// opKind is what a step does.
type opKind int

const (
	opCreate opKind = iota
	opDelete
	opSet
	opExists
	opGet
	opChildren
	opMulti
	opSync
	opGetACL
	opSetACL
	opAddAuth
	opClose
)

var opNames = [...]string{"create", "delete", "set", "exists", "get", "children", "multi", "sync", "getACL", "setACL", "addAuth", "close"}

func (k opKind) String() string { return opNames[k] }

// writes reports whether the step can change the tree, and so fire watches.
func (k opKind) writes() bool {
	switch k {
	case opCreate, opDelete, opSet, opMulti, opSetACL, opClose:
		return true
	}
	return false
}

// aclKind names the ACLs a step can set.
type aclKind int

const (
	aclOpen aclKind = iota
	aclRead
	aclCreator
	aclAlice
	aclIPHost     // ip:127.0.0.1, the clients' address
	aclIPNet      // ip:127.0.0.0/8 reads, the world administers
	aclIPElse     // ip:10.0.0.0/8 and 127.0.0.2/31: grants the clients nothing
	aclIPv6       // ip:::1, which 3.8.0 refuses (InvalidACL)
	aclIPBad      // a malformed ip id (InvalidACL)
	aclCreatorMix // creator READ|ADMIN, world READ, ip host WRITE
)

var aclNames = [...]string{"open", "read", "creator", "alice", "ip-host", "ip-net", "ip-else", "ip-v6", "ip-bad", "creator-mix"}

func (a aclKind) String() string { return aclNames[a] }

func ipACL(perms int32, id string) zksim.ACL { return zksim.ACL{Perms: perms, Scheme: "ip", ID: id} }

func (a aclKind) acl() []zksim.ACL {
	switch a {
	case aclRead:
		return zksim.ReadACL()
	case aclCreator:
		return zksim.CreatorACL(zksim.PermAll)
	case aclAlice:
		return zksim.DigestACL(zksim.PermAll, "alice", "pw")
	case aclIPHost:
		return []zksim.ACL{ipACL(zksim.PermAll, "127.0.0.1")}
	case aclIPNet:
		return []zksim.ACL{ipACL(zksim.PermRead|zksim.PermWrite|zksim.PermCreate, "127.0.0.0/8"), {Perms: zksim.PermAdmin | zksim.PermDelete, Scheme: "world", ID: "anyone"}}
	case aclIPElse:
		return []zksim.ACL{ipACL(zksim.PermAll, "10.0.0.0/8"), ipACL(zksim.PermAll, "127.0.0.2/31")}
	case aclIPv6:
		return []zksim.ACL{ipACL(zksim.PermAll, "::1")}
	case aclIPBad:
		return []zksim.ACL{ipACL(zksim.PermAll, "127.0.0.1/33")}
	case aclCreatorMix:
		return append(append(zksim.CreatorACL(zksim.PermRead|zksim.PermAdmin), zksim.ReadACL()...), ipACL(zksim.PermWrite, "127.0.0.1"))
	}
	return zksim.OpenACL()
}

// ttl is the TTL of every TTL node: long enough that neither backend reaps
// one during a sequence.
const ttl = time.Hour

// step is one operation by one session. The same step runs on both
// backends.
type step struct {
	session int
	kind    opKind
	path    string
	data    []byte
	mode    zksim.CreateMode
	acl     aclKind
	version int32
	watch   bool
	auth    string     // addAuth: "user:password" for scheme digest
	ops     []zksim.Op // multi
}

// describe renders the step with paths relative to root.
func (s step) describe(root string) string {
	rel := func(p string) string {
		if p == root {
			return "~"
		}
		if rest, ok := strings.CutPrefix(p, root+"/"); ok {
			return "~/" + rest
		}
		return p
	}
	head := fmt.Sprintf("s%d %v", s.session, s.kind)
	switch s.kind {
	case opCreate:
		return fmt.Sprintf("%s %s %v acl=%v data=%s", head, rel(s.path), s.mode, s.acl, showData(s.data))
	case opDelete:
		return fmt.Sprintf("%s %s v=%d", head, rel(s.path), s.version)
	case opSet:
		return fmt.Sprintf("%s %s data=%s v=%d", head, rel(s.path), showData(s.data), s.version)
	case opExists, opGet, opChildren:
		return fmt.Sprintf("%s %s watch=%v", head, rel(s.path), s.watch)
	case opSync, opGetACL:
		return fmt.Sprintf("%s %s", head, rel(s.path))
	case opSetACL:
		return fmt.Sprintf("%s %s acl=%v v=%d", head, rel(s.path), s.acl, s.version)
	case opAddAuth:
		return fmt.Sprintf("%s digest %s", head, s.auth)
	case opMulti:
		parts := make([]string, len(s.ops))
		for i, op := range s.ops {
			switch o := op.(type) {
			case *zksim.CreateOp:
				parts[i] = fmt.Sprintf("create %s %v acl=%v data=%s", rel(o.Path), o.Mode, o.ACL, showData(o.Data))
			case *zksim.DeleteOp:
				parts[i] = fmt.Sprintf("delete %s v=%d", rel(o.Path), o.Version)
			case *zksim.SetOp:
				parts[i] = fmt.Sprintf("set %s data=%s v=%d", rel(o.Path), showData(o.Data), o.Version)
			case *zksim.CheckOp:
				parts[i] = fmt.Sprintf("check %s v=%d", rel(o.Path), o.Version)
			}
		}
		return fmt.Sprintf("%s [%s]", head, strings.Join(parts, "; "))
	}
	return head
}

// outcome is what a step returned on one backend, normalised.
type outcome struct {
	text    string             // compared between backends
	watch   <-chan zksim.Event // the watch the step set, if any
	created []string           // paths the step created
}

// run executes the step on b and normalises its result.
func (s step) run(ctx context.Context, b *backend) outcome {
	c := b.conns[s.session]
	var out outcome
	switch s.kind {
	case opCreate:
		var (
			p   string
			err error
		)
		if s.mode.IsTTL() {
			p, err = c.CreateTTL(ctx, s.path, s.data, s.mode, s.acl.acl(), ttl)
		} else {
			p, err = c.Create(ctx, s.path, s.data, s.mode, s.acl.acl())
		}
		if err == nil {
			out.created = append(out.created, p)
		}
		out.text = fmt.Sprintf("path=%s err=%s", b.rel(p), errName(err))
	case opDelete:
		out.text = "err=" + errName(c.Delete(ctx, s.path, s.version))
	case opSet:
		st, err := c.Set(ctx, s.path, s.data, s.version)
		out.text = fmt.Sprintf("stat=%s err=%s", b.stat(st), errName(err))
	case opExists:
		var (
			ok  bool
			st  *zksim.Stat
			err error
		)
		if s.watch {
			ok, st, out.watch, err = c.ExistsW(ctx, s.path)
		} else {
			ok, st, err = c.Exists(ctx, s.path)
		}
		out.text = fmt.Sprintf("exists=%v stat=%s watch=%v err=%s", ok, b.stat(st), out.watch != nil, errName(err))
	case opGet:
		var (
			data []byte
			st   *zksim.Stat
			err  error
		)
		if s.watch {
			data, st, out.watch, err = c.GetW(ctx, s.path)
		} else {
			data, st, err = c.Get(ctx, s.path)
		}
		out.text = fmt.Sprintf("data=%s stat=%s watch=%v err=%s", showData(data), b.stat(st), out.watch != nil, errName(err))
	case opChildren:
		var (
			names []string
			st    *zksim.Stat
			err   error
		)
		if s.watch {
			names, st, out.watch, err = c.ChildrenW(ctx, s.path)
		} else {
			names, st, err = c.Children(ctx, s.path)
		}
		// Unsorted: zkmem lists children in the server's order.
		out.text = fmt.Sprintf("children=%v stat=%s watch=%v err=%s", names, b.stat(st), out.watch != nil, errName(err))
	case opMulti:
		results, err := c.Multi(ctx, s.ops...)
		parts := make([]string, len(results))
		for i, r := range results {
			parts[i] = fmt.Sprintf("{path=%s stat=%s err=%s}", b.rel(r.Path), b.stat(r.Stat), errName(r.Err))
			if r.Err == nil && err == nil && r.Path != "" {
				out.created = append(out.created, r.Path)
			}
		}
		out.text = fmt.Sprintf("results=%s err=%s", strings.Join(parts, " "), errName(err))
	case opSync:
		p, err := c.Sync(ctx, s.path)
		out.text = fmt.Sprintf("path=%s err=%s", b.rel(p), errName(err))
	case opGetACL:
		acl, st, err := c.GetACL(ctx, s.path)
		out.text = fmt.Sprintf("acl=%v stat=%s err=%s", acl, b.stat(st), errName(err))
	case opSetACL:
		st, err := c.SetACL(ctx, s.path, s.acl.acl(), s.version)
		out.text = fmt.Sprintf("stat=%s err=%s", b.stat(st), errName(err))
	case opAddAuth:
		out.text = "err=" + errName(c.AddAuth(ctx, "digest", []byte(s.auth)))
	case opClose:
		out.text = "err=" + errName(c.Close())
		b.closed[s.session] = true
	}
	return out
}

// showData renders data byte for byte, null (nil) apart from empty: the
// outcomes compared must tell them apart.
func showData(b []byte) string {
	if b == nil {
		return "null"
	}
	return fmt.Sprintf("%q", b)
}
