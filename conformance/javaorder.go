package conformance

import (
	"slices"
	"unicode/utf16"

	"github.com/zksim/zksim"
)

// The orders a ZooKeeper 3.8.0 server gives to lists it builds from Java
// hash sets, modelled here so that cases can ask for them exactly. They
// follow the JDK's HashMap and ConcurrentHashMap; the cases keep to the
// sizes where the model is exact (no bucket turned into a tree).

// javaStringHash is String.hashCode: over UTF-16 code units.
func javaStringHash(s string) int32 {
	var h int32
	for _, u := range utf16.Encode([]rune(s)) {
		h = 31*h + int32(u)
	}
	return h
}

// childOrder models DataNode's children: a HashSet<String>(8) that only
// grows. Its iteration order is by bucket (the low bits of h ^ h>>>16),
// then by insertion within a bucket; the table starts at 8 buckets and
// doubles when the set passes 3/4 of it, or when a bucket reaches 9
// entries in a table of fewer than 64 (HashMap.treeifyBin).
type childOrder struct {
	initLog uint           // log2 of the table size at the first add
	log     uint           // log2 of the table size, 0 before the first add
	seq     int            // adds so far
	added   map[string]int // present names and when they were added
}

func newChildOrder() *childOrder { return &childOrder{initLog: 3, added: make(map[string]int)} }

// newEphemeralOrder models DataTree's set of a session's ephemerals: a
// HashSet<String>() of full paths, 16 buckets at first, otherwise as a
// node's children.
func newEphemeralOrder() *childOrder { return &childOrder{initLog: 4, added: make(map[string]int)} }

func (o *childOrder) bucket(name string) uint32 {
	h := uint32(javaStringHash(name))
	return (h ^ h>>16) & (1<<o.log - 1)
}

func (o *childOrder) add(names ...string) {
	for _, name := range names {
		if _, ok := o.added[name]; ok {
			continue
		}
		if o.log == 0 {
			o.log = o.initLog
		}
		inBucket := 0
		for p := range o.added {
			if o.bucket(p) == o.bucket(name) {
				inBucket++
			}
		}
		o.added[name] = o.seq
		o.seq++
		if inBucket >= 8 && o.log < 6 {
			o.log++
		}
		if len(o.added) > 3<<o.log/4 {
			o.log++
		}
	}
}

func (o *childOrder) remove(names ...string) {
	for _, name := range names {
		delete(o.added, name)
	}
}

// order returns the present names in the server's order.
func (o *childOrder) order() []string {
	names := make([]string, 0, len(o.added))
	for p := range o.added {
		names = append(names, p)
	}
	slices.SortFunc(names, func(a, b string) int {
		if ba, bb := o.bucket(a), o.bucket(b); ba != bb {
			return int(ba) - int(bb)
		}
		return o.added[a] - o.added[b]
	})
	return names
}

// cloneOrder returns the present names in the iteration order of a clone
// of the set (HashSet.clone, HashMap.putMapEntries): a new table of
// tableSizeFor((int)(n/0.75f + 1)) buckets gets the names in the set's
// order, and doubles when one of its buckets reaches 9 names while it has
// fewer than 64 (putVal's treeifyBin). DataTree.getEphemerals returns such
// a clone, for getEphemerals and for the paths a closeSession deletes.
func (o *childOrder) cloneOrder() []string {
	names := o.order()
	t := int(float32(len(names))/0.75 + 1)
	log := uint(0) // tableSizeFor(t)
	for 1<<log < t {
		log++
	}
	at := func(name string) uint32 {
		h := uint32(javaStringHash(name))
		return (h ^ h>>16) & (1<<log - 1)
	}
	for i := range names {
		inBucket := 0
		for _, p := range names[:i] {
			if at(p) == at(names[i]) {
				inBucket++
			}
		}
		if inBucket >= 8 && log < 6 {
			log++
		}
	}
	slices.SortStableFunc(names, func(a, b string) int { return int(at(a)) - int(at(b)) })
	return names
}

// authOrder returns the digest identities a session holds in the order an
// "auth" ACL expands to them (PrepRequestProcessor.fixupACL walks
// ServerCnxn.authInfo, a set over a ConcurrentHashMap<Id, Boolean> of 16
// buckets that also holds the connection's "ip" identity, which the
// expansion skips). ids are the digest ids in the order the client added
// them; the model is exact below 12 identities, where the map would grow.
func authOrder(ids ...string) []string {
	type entry struct {
		id     string
		bucket int32
		seq    int
	}
	var es []entry
	idHash := func(scheme, id string) int32 {
		return 37*(37*17+javaStringHash(scheme)) + javaStringHash(id)
	}
	add := func(scheme, id string) {
		for _, e := range es {
			if e.id == scheme+":"+id {
				return
			}
		}
		h := idHash(scheme, id)
		h = (h ^ int32(uint32(h)>>16)) & 0x7fffffff
		es = append(es, entry{scheme + ":" + id, h & 15, len(es)})
	}
	add("ip", "127.0.0.1")
	for _, id := range ids {
		add("digest", id)
	}
	slices.SortFunc(es, func(a, b entry) int {
		if a.bucket != b.bucket {
			return int(a.bucket - b.bucket)
		}
		return a.seq - b.seq
	})
	var out []string
	for _, e := range es {
		if e.id[:3] != "ip:" {
			out = append(out, e.id[len("digest:"):])
		}
	}
	return out
}

// authACL is the ACL an "auth" entry with perms expands to for a session
// that logged in with these "user:password" credentials, in order.
func authACL(perms int32, credentials ...string) []zksim.ACL {
	var ids []string
	for _, c := range credentials {
		user, pass := c, ""
		for i := 0; i < len(c); i++ {
			if c[i] == ':' {
				user, pass = c[:i], c[i+1:]
				break
			}
		}
		ids = append(ids, zksim.DigestID(user, pass))
	}
	var acl []zksim.ACL
	for _, id := range authOrder(ids...) {
		acl = append(acl, zksim.ACL{Perms: perms, Scheme: "digest", ID: id})
	}
	return acl
}
