package zkmem

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"net/netip"
	"strconv"
	"strings"
)

// DefaultClientAddr is the address an in-process Conn comes from unless
// WithClientAddr says otherwise: its "ip" identity is ip:127.0.0.1.
var DefaultClientAddr = netip.AddrFrom4([4]byte{127, 0, 0, 1})

// errNoClientAddr is returned for a session opened or resumed without a
// client address.
var errNoClientAddr = errors.New("zkmem: the client address is not set (the zero netip.Addr)")

// ipIdentity is the id of the "ip" identity of a client at addr, as a
// ZooKeeper server writes it (InetAddress.getHostAddress of the peer): an
// IPv4 address, or an IPv4-mapped IPv6 one, in dotted decimal; any other
// IPv6 address as eight groups of lowercase hex without leading zeros and
// without "::" shortening ("0:0:0:0:0:0:0:1" for ::1), with its zone after
// a "%" if it has one. No "ip" ACL matches an IPv6 identity: a 3.8 server
// parses only IPv4 in IPAuthenticationProvider (see ipMatches).
func ipIdentity(addr netip.Addr) string {
	if addr.Is4() || addr.Is4In6() {
		return addr.Unmap().String()
	}
	b := addr.As16()
	var sb strings.Builder
	for i := 0; i < 16; i += 2 {
		if i > 0 {
			sb.WriteByte(':')
		}
		sb.WriteString(strconv.FormatUint(uint64(binary.BigEndian.Uint16(b[i:])), 16))
	}
	if z := addr.Zone(); z != "" {
		sb.WriteString("%" + z)
	}
	return sb.String()
}

// sessionSecret keys the session passwords of one server.
type sessionSecret [32]byte

// newSessionSecret draws a server's secret from crypto/rand.
func newSessionSecret() sessionSecret {
	var s sessionSecret
	if _, err := rand.Read(s[:]); err != nil {
		panic("zkmem: crypto/rand: " + err.Error()) // never fails on supported platforms
	}
	return s
}

// password returns the 16-byte password of session id: the first 16 bytes
// of HMAC-SHA256 of the id under the server's secret. Without the secret it
// cannot be derived from the id, which GET /sessions, cons and dump show.
func (k *sessionSecret) password(id int64) []byte {
	m := hmac.New(sha256.New, k[:])
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(id))
	m.Write(b[:])
	return m.Sum(nil)[:16]
}

// SetSessionSecret sets the key from which the server derives the
// passwords of the sessions it opens from now on (sessions already open
// keep theirs). By default each server draws its own from crypto/rand, so
// that nobody who sees a session id (GET /sessions, cons, dump) can resume
// the session. A simulator that must replay byte for byte sets it from its
// seed. Any length is accepted; 32 random bytes are as good as it gets.
func (s *Server) SetSessionSecret(secret []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.secret = sha256.Sum256(secret)
}

// credential is an addAuth a client library remembers and sends again
// whenever it reconnects (go-zookeeper's and kazoo's auth data): the server
// forgets a session's identities when the connection that added them goes.
type credential struct {
	scheme string
	auth   []byte
}

// resetAuth gives a session on a new connection from addr the only
// identity the server gives a fresh connection: ip, its address. The
// identities added on the old connection are gone (they belong to a
// ServerCnxn on a real server); the client sends addAuth again if it wants
// them. Called with srv.mu held.
func (sess *Session) resetAuth(addr netip.Addr) {
	sess.addr = ipIdentity(addr)
	sess.auth = append(sess.auth[:0:0], authID{scheme: "ip", id: sess.addr})
}

// addAuth adds id to the session's identities unless it holds it already.
// Called with srv.mu held.
func (sess *Session) addAuth(id authID) {
	for _, a := range sess.auth {
		if a == id {
			return
		}
	}
	sess.auth = append(sess.auth, id)
}
