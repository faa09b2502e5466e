package zkmem

import (
	"crypto/sha1"
	"encoding/base64"
	"net/netip"
	"strconv"
	"strings"

	"github.com/zksim/zksim"
)

// aclList is an interned, immutable ACL: nodes with equal ACLs share one.
type aclList struct {
	entries []zksim.ACL
	key     string
}

// authID is one identity a session has authenticated as (ZooKeeper's Id).
type authID struct {
	scheme string
	id     string
}

// clientIP is the address every in-process connection comes from.
const clientIP = "127.0.0.1"

// aclInterner interns ACLs; last short-cuts the common case of many nodes
// created in a row with the same ACL.
type aclInterner struct {
	byKey map[string]*aclList
	last  *aclList
}

func aclKey(acl []zksim.ACL) string {
	var b strings.Builder
	for _, a := range acl {
		b.WriteString(strconv.Itoa(int(a.Perms)))
		b.WriteByte(0)
		b.WriteString(a.Scheme)
		b.WriteByte(0)
		b.WriteString(a.ID)
		b.WriteByte(0)
	}
	return b.String()
}

func (in *aclInterner) intern(acl []zksim.ACL) *aclList {
	if l := in.last; l != nil && slicesEqual(l.entries, acl) {
		return l
	}
	k := aclKey(acl)
	l, ok := in.byKey[k]
	if !ok {
		l = &aclList{entries: append([]zksim.ACL(nil), acl...), key: k}
		in.byKey[k] = l
	}
	in.last = l
	return l
}

func slicesEqual(a, b []zksim.ACL) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// fixupACL validates an ACL for create or setACL and expands the "auth"
// scheme to the session's authenticated identities
// (PrepRequestProcessor.fixupACL).
func fixupACL(acl []zksim.ACL, auth []authID) ([]zksim.ACL, error) {
	if len(acl) == 1 && acl[0].Scheme == "world" && acl[0].ID == "anyone" {
		return acl, nil // the common case, without allocating
	}
	uniq := make([]zksim.ACL, 0, len(acl))
	for _, a := range acl {
		dup := false
		for _, u := range uniq {
			if u == a {
				dup = true
				break
			}
		}
		if !dup {
			uniq = append(uniq, a)
		}
	}
	if len(uniq) == 0 {
		return nil, zksim.ErrInvalidACL
	}
	out := make([]zksim.ACL, 0, len(uniq))
	for _, a := range uniq {
		switch {
		case a.Scheme == "world" && a.ID == "anyone":
			out = append(out, a)
		case a.Scheme == "auth":
			valid := false
			for _, id := range auth {
				if id.scheme == "digest" { // the only provider that "isAuthenticated"
					valid = true
					out = append(out, zksim.ACL{Perms: a.Perms, Scheme: id.scheme, ID: id.id})
				}
			}
			if !valid {
				return nil, zksim.ErrInvalidACL
			}
		case a.Scheme == "digest" && validDigestID(a.ID):
			out = append(out, a)
		case a.Scheme == "ip" && validIPExpr(a.ID):
			out = append(out, a)
		default:
			return nil, zksim.ErrInvalidACL
		}
	}
	return out, nil
}

// validDigestID mirrors DigestAuthenticationProvider.isValid: Java's
// id.split(":") must give exactly two parts (trailing empty parts dropped).
func validDigestID(id string) bool {
	parts := strings.Split(id, ":")
	for len(parts) > 0 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	return len(parts) == 2
}

// validIPExpr mirrors IPAuthenticationProvider.isValid: an address with an
// optional /bits.
func validIPExpr(expr string) bool {
	addr, bits, hasBits := strings.Cut(expr, "/")
	ip, err := netip.ParseAddr(addr)
	if err != nil {
		return false
	}
	if hasBits {
		n, err := strconv.Atoi(bits)
		if err != nil || n < 0 || n > ip.BitLen() {
			return false
		}
	}
	return true
}

func ipMatches(clientAddr, expr string) bool {
	addr, bits, hasBits := strings.Cut(expr, "/")
	want, err := netip.ParseAddr(addr)
	if err != nil {
		return false
	}
	got, err := netip.ParseAddr(clientAddr)
	if err != nil || got.BitLen() != want.BitLen() {
		return false
	}
	n := want.BitLen()
	if hasBits {
		if n, err = strconv.Atoi(bits); err != nil {
			return false
		}
	}
	p, err := want.Prefix(n)
	if err != nil {
		return false
	}
	return p.Contains(got)
}

// checkACL reports whether a session with the given identities holds perm on
// a node with this ACL (ZooKeeperServer.checkACL).
func checkACL(acl *aclList, perm int32, auth []authID) error {
	if acl == nil || len(acl.entries) == 0 {
		return nil
	}
	for _, id := range auth {
		if id.scheme == "super" {
			return nil
		}
	}
	for _, a := range acl.entries {
		if a.Perms&perm == 0 {
			continue
		}
		if a.Scheme == "world" && a.ID == "anyone" {
			return nil
		}
		for _, id := range auth {
			if id.scheme != a.Scheme {
				continue
			}
			switch a.Scheme {
			case "digest":
				if id.id == a.ID {
					return nil
				}
			case "ip":
				if ipMatches(id.id, a.ID) {
					return nil
				}
			}
		}
	}
	return zksim.ErrNoAuth
}

// authenticate turns an AddAuth call into an identity
// (the server's AuthenticationProvider.handleAuthentication).
func authenticate(scheme string, auth []byte) (authID, bool) {
	switch scheme {
	case "digest":
		return authID{scheme: "digest", id: generateDigest(string(auth))}, true
	case "ip":
		return authID{scheme: "ip", id: clientIP}, true
	}
	return authID{}, false
}

// generateDigest mirrors DigestAuthenticationProvider.generateDigest: the
// user part of "user:password", a colon, and base64(sha1) of the whole
// string. For well-formed credentials it equals zksim.DigestID.
func generateDigest(idPassword string) string {
	user, _, _ := strings.Cut(idPassword, ":")
	sum := sha1.Sum([]byte(idPassword))
	return user + ":" + base64.StdEncoding.EncodeToString(sum[:])
}
