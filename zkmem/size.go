package zkmem

import "github.com/zksim/zksim"

// Request sizes as jute encodes them, for the jute.maxbuffer check: a
// server closes the connection on a packet longer than its maxbuffer.

const requestHeaderSize = 8 // xid, type

func juteString(s string) int { return 4 + len(s) }
func juteBuffer(b []byte) int { return 4 + len(b) }

func juteACL(acl []zksim.ACL) int {
	n := 4
	for _, a := range acl {
		n += 4 + juteString(a.Scheme) + juteString(a.ID)
	}
	return n
}

func createSize(path string, data []byte, acl []zksim.ACL, ttl bool) int {
	n := juteString(path) + juteBuffer(data) + juteACL(acl) + 4
	if ttl {
		n += 8
	}
	return n
}

func setDataSize(path string, data []byte) int { return juteString(path) + juteBuffer(data) + 4 }

func setACLSize(path string, acl []zksim.ACL) int { return juteString(path) + juteACL(acl) + 4 }

const multiHeaderSize = 4 + 1 + 4 // type, done, err

func multiSize(ops []zksim.Op) int {
	n := multiHeaderSize // the closing header
	for _, op := range ops {
		n += multiHeaderSize
		switch o := op.(type) {
		case *zksim.CreateOp:
			n += createSize(o.Path, o.Data, o.ACL, o.Mode.IsTTL())
		case *zksim.DeleteOp:
			n += juteString(o.Path) + 4
		case *zksim.SetOp:
			n += setDataSize(o.Path, o.Data)
		case *zksim.CheckOp:
			n += juteString(o.Path) + 4
		}
	}
	return n
}
