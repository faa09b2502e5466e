package zkmem

import (
	"crypto/sha1"
	"encoding/base64"
	"slices"
	"strconv"
	"strings"
	"unicode"

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
// (PrepRequestProcessor.fixupACL). sasl says whether the server has the
// "sasl" scheme (Options.SASLUsers).
func fixupACL(acl []zksim.ACL, auth []authID, sasl bool) ([]zksim.ACL, error) {
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
			for _, id := range authIterationOrder(auth) {
				if id.scheme == "digest" || id.scheme == "sasl" { // the providers that "isAuthenticated"
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
		case a.Scheme == "sasl" && sasl && validSASLID(a.ID):
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

// validIPExpr mirrors IPAuthenticationProvider.isValid in 3.8.0: an IPv4
// address with an optional "/bits", bits in [0, 32]. IPv6 is not accepted
// (the provider has no IPv6 parser), and numbers are read as Java's
// Integer.parseInt reads them: a sign is allowed, and so are the decimal
// digits of other scripts.
func validIPExpr(expr string) bool {
	_, _, ok := parseIPExpr(expr)
	return ok
}

// parseIPExpr splits an ip ACL id into its IPv4 address and mask length.
func parseIPExpr(expr string) (addr [4]byte, bits int, ok bool) {
	a, b, hasBits := strings.Cut(expr, "/")
	addr, ok = javaIPv4(a)
	if !ok {
		return addr, 0, false
	}
	bits = 32
	if hasBits {
		n, ok := javaParseInt(b)
		if !ok || n < 0 || n > 32 {
			return addr, 0, false
		}
		bits = int(n)
	}
	return addr, bits, true
}

// javaIPv4 mirrors IPAuthenticationProvider.v4addr2Bytes: split on "."
// keeping empty parts, exactly four numbers in [0, 255].
func javaIPv4(s string) (b [4]byte, ok bool) {
	parts := strings.Split(s, ".")
	if len(parts) != 4 {
		return b, false
	}
	for i, p := range parts {
		v, ok := javaParseInt(p)
		if !ok || v < 0 || v > 255 {
			return b, false
		}
		b[i] = byte(v)
	}
	return b, true
}

// javaParseInt mirrors Integer.parseInt(s, 10): an optional sign, then at
// least one decimal digit of any script (Character.digit over UTF-16 code
// units, so no digit beyond U+FFFF), within the int32 range.
func javaParseInt(s string) (int64, bool) {
	neg := false
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg, s = s[0] == '-', s[1:]
	}
	if s == "" {
		return 0, false
	}
	var v int64
	for _, r := range s {
		d, ok := decimalDigit(r)
		if !ok {
			return 0, false
		}
		v = v*10 + int64(d)
		if v > 1<<31 {
			return 0, false
		}
	}
	if neg {
		v = -v
	}
	if v > 1<<31-1 {
		return 0, false
	}
	return v, true
}

// decimalDigit is Character.digit(r, 10) for a rune of the BMP: the value
// of a Unicode decimal digit (category Nd, whose digits come in runs from
// zero to nine).
func decimalDigit(r rune) (int, bool) {
	if r >= '0' && r <= '9' {
		return int(r - '0'), true
	}
	if r > 0xffff || !unicode.IsDigit(r) {
		return 0, false
	}
	for _, rg := range unicode.Digit.R16 {
		if lo, hi := rune(rg.Lo), rune(rg.Hi); r >= lo && r <= hi && rg.Stride == 1 {
			return int(r-lo) % 10, true
		}
	}
	return 0, false
}

// ipMatches mirrors IPAuthenticationProvider.matches: both addresses
// masked to the ACL's bits.
func ipMatches(clientAddr, expr string) bool {
	want, bits, ok := parseIPExpr(expr)
	if !ok {
		return false
	}
	got, ok := javaIPv4(clientAddr)
	if !ok {
		return false
	}
	for i := 0; i < 4; i++ {
		m := byte(0xff)
		switch {
		case bits >= 8*(i+1):
		case bits <= 8*i:
			m = 0
		default:
			m = ^byte(0xff >> (bits - 8*i))
		}
		if got[i]&m != want[i]&m {
			return false
		}
	}
	return true
}

// authIterationOrder returns a session's identities, given in the order
// they were added, in the order the server walks them: ServerCnxn.authInfo
// is a set over a ConcurrentHashMap<Id, Boolean>, whose 16 buckets hold
// the identities by the spread hash of the jute Id (37*(37*17 +
// scheme.hashCode()) + id.hashCode()), each bucket in insertion order.
// Exact below 12 identities, where the map would double and reorder them;
// a session with that many logins keeps this order in zkmem.
func authIterationOrder(auth []authID) []authID {
	bucket := func(id authID) uint32 {
		h := uint32(37*(37*17+javaStringHash(id.scheme)) + javaStringHash(id.id))
		return (h ^ h>>16) & 0x7fffffff & 15
	}
	out := slices.Clone(auth)
	slices.SortStableFunc(out, func(a, b authID) int { return int(bucket(a)) - int(bucket(b)) })
	return out
}

// javaStringHash is String.hashCode.
func javaStringHash(s string) int32 {
	var h int32
	for _, r := range s {
		if r >= 0x10000 {
			r -= 0x10000
			h = 31*h + 0xd800 + r>>10
			h = 31*h + 0xdc00 + r&0x3ff
		} else {
			h = 31*h + r
		}
	}
	return h
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
			case "sasl":
				if saslMatches(id.id, a.ID) {
					return nil
				}
			}
		}
	}
	return zksim.ErrNoAuth
}

// authenticate turns an AddAuth call on a connection whose "ip" identity
// is ip into an identity (the server's
// AuthenticationProvider.handleAuthentication).
func authenticate(scheme string, auth []byte, ip string) (authID, bool) {
	switch scheme {
	case "digest":
		return authID{scheme: "digest", id: generateDigest(string(auth))}, true
	case "ip":
		return authID{scheme: "ip", id: ip}, true
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
