package jute

// The records of module org.apache.zookeeper.data.

// ID is an identity: a scheme and an id within it.
type ID struct {
	Scheme string
	ID     string
}

// Encode implements Record.
func (r *ID) Encode(e *Encoder) { e.String(r.Scheme); e.String(r.ID) }

// Decode implements Record.
func (r *ID) Decode(d *Decoder) { r.Scheme = d.String(); r.ID = d.String() }

// ACL is one access control entry: permissions for an identity.
type ACL struct {
	Perms int32
	ID    ID
}

// Encode implements Record.
func (r *ACL) Encode(e *Encoder) { e.Int(r.Perms); r.ID.Encode(e) }

// Decode implements Record.
func (r *ACL) Decode(d *Decoder) { r.Perms = d.Int(); r.ID.Decode(d) }

func encodeACLs(e *Encoder, acl []ACL) {
	if acl == nil {
		e.Int(-1)
		return
	}
	e.Int(int32(len(acl)))
	for i := range acl {
		acl[i].Encode(e)
	}
}

func decodeACLs(d *Decoder) []ACL {
	n, ok := d.vectorLen(12)
	if !ok || n < 0 {
		return nil
	}
	out := make([]ACL, n)
	for i := range out {
		out[i].Decode(d)
	}
	if d.err != nil {
		return nil
	}
	return out
}

// Stat is a znode's metadata as the client sees it.
type Stat struct {
	Czxid          int64
	Mzxid          int64
	Ctime          int64
	Mtime          int64
	Version        int32
	Cversion       int32
	Aversion       int32
	EphemeralOwner int64
	DataLength     int32
	NumChildren    int32
	Pzxid          int64
}

// StatSize is the encoded size of a Stat.
const StatSize = 68

// Encode implements Record.
func (r *Stat) Encode(e *Encoder) {
	e.Long(r.Czxid)
	e.Long(r.Mzxid)
	e.Long(r.Ctime)
	e.Long(r.Mtime)
	e.Int(r.Version)
	e.Int(r.Cversion)
	e.Int(r.Aversion)
	e.Long(r.EphemeralOwner)
	e.Int(r.DataLength)
	e.Int(r.NumChildren)
	e.Long(r.Pzxid)
}

// Decode implements Record.
func (r *Stat) Decode(d *Decoder) {
	r.Czxid = d.Long()
	r.Mzxid = d.Long()
	r.Ctime = d.Long()
	r.Mtime = d.Long()
	r.Version = d.Int()
	r.Cversion = d.Int()
	r.Aversion = d.Int()
	r.EphemeralOwner = d.Long()
	r.DataLength = d.Int()
	r.NumChildren = d.Int()
	r.Pzxid = d.Long()
}

// ClientInfo is one identity of a session, as whoAmI reports it.
type ClientInfo struct {
	AuthScheme string
	User       string
}

// Encode implements Record.
func (r *ClientInfo) Encode(e *Encoder) { e.String(r.AuthScheme); e.String(r.User) }

// Decode implements Record.
func (r *ClientInfo) Decode(d *Decoder) { r.AuthScheme = d.String(); r.User = d.String() }
