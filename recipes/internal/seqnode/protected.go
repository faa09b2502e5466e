package seqnode

import (
	"fmt"
	"io"
	"strings"

	"github.com/zksim/zksim"
)

// protectedPrefix starts every protected name, as in Curator.
const protectedPrefix = "_c_"

// NewGUID returns a random (version 4) UUID in its usual 36-character text
// form, drawn from conn's randomness (zksim.RandReader): crypto/rand, or a
// simulated client's seeded stream, so that a simulation replays the same
// names from its seed.
func NewGUID(conn zksim.Conn) string {
	var b [16]byte
	_, _ = io.ReadFull(zksim.RandReader(conn), b[:]) // neither source fails
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// ProtectedName returns the name a sequential create is given for guid and
// name: "_c_<guid>-<name>", or "<guid><name>" for a guid in kazoo's form
// (KazooGUID). The server appends the sequence number.
func ProtectedName(guid, name string) string {
	if isKazooGUID(guid) {
		return guid + name
	}
	return protectedPrefix + guid + "-" + name
}

// HasGUID reports whether child is a protected name carrying guid (in
// either form, see ProtectedName).
func HasGUID(child, guid string) bool {
	if isKazooGUID(guid) {
		return strings.HasPrefix(child, guid)
	}
	return strings.HasPrefix(child, protectedPrefix+guid+"-")
}

// FindGUID returns the first child that carries guid.
func FindGUID(children []string, guid string) (string, bool) {
	for _, c := range children {
		if HasGUID(c, guid) {
			return c, true
		}
	}
	return "", false
}
