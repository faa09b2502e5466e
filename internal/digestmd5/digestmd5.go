// Package digestmd5 is the DIGEST-MD5 SASL mechanism (RFC 2831) as a
// ZooKeeper 3.8 server runs it: Java's provider
// (com.sun.security.sasl.digest) created with protocol "zookeeper" and
// server name "zk-sasl-md5", no properties, so realm "zk-sasl-md5", qop
// "auth" only, charset UTF-8 and algorithm md5-sess. Server is that
// server's side, step for step and error for error; Client is a client's
// side, for tests that talk to a server.
//
// Only authentication is implemented: qop "auth", no integrity or privacy
// layer, which ZooKeeper never negotiates.
package digestmd5

import (
	"bytes"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// ZooKeeper's fixed names for DIGEST-MD5 (ZooKeeperSaslServer,
// SecurityUtils.createSaslServer): the realm is the server name, and a
// client's digest-uri is Protocol "/" ServerName.
const (
	Protocol   = "zookeeper"
	ServerName = "zk-sasl-md5"
)

// ErrFailed is a failed authentication: a response the server rejects (a
// wrong password, an unknown user, a bad directive). ZooKeeper answers it
// AuthFailed and closes the connection.
var ErrFailed = errors.New("digest-md5: authentication failed")

// ErrMalformed is a response whose maxbuf or nonce-count directive is not
// a number. Java's provider throws a runtime exception there, which
// ZooKeeper does not catch: the connection closes with no reply.
var ErrMalformed = errors.New("digest-md5: malformed number in the response")

// maxResponse is the longest response the server reads
// (DigestMD5Base.MAX_RESPONSE_LENGTH is 4096; longer is refused).
const maxResponse = 4096

// parseDirectives splits a challenge or response into its directives,
// keyed by lower-case name, as DigestMD5Base.parseDirectives does: values
// quoted or not, a backslash escaping the next byte inside quotes, linear
// white space around separators, empty elements skipped. Only names in
// keys are kept; a name given twice is an error, except "realm" when
// multiRealm is set (the values are then kept in order).
func parseDirectives(buf []byte, keys []string, multiRealm bool) (map[string][][]byte, error) {
	out := make(map[string][][]byte)
	var key, value []byte
	gettingKey, quoted, expectSep := true, false, false
	store := func() error {
		k := strings.ToLower(string(key))
		for _, want := range keys {
			if k != want {
				continue
			}
			if len(out[k]) > 0 && !(multiRealm && k == "realm") {
				return fmt.Errorf("%w: directive %q given twice", ErrFailed, k)
			}
			out[k] = append(out[k], append([]byte{}, value...))
			break
		}
		key, value = key[:0], value[:0]
		return nil
	}
	i := skipLWS(buf, 0)
	for i < len(buf) {
		b := buf[i]
		switch {
		case gettingKey:
			switch {
			case b == ',':
				if len(key) != 0 {
					return nil, fmt.Errorf("%w: a directive name holds a comma", ErrFailed)
				}
				i = skipLWS(buf, i+1)
			case b == '=':
				if len(key) == 0 {
					return nil, fmt.Errorf("%w: an empty directive name", ErrFailed)
				}
				gettingKey = false
				i = skipLWS(buf, i+1)
				if i >= len(buf) {
					return nil, fmt.Errorf("%w: directive %q has no value", ErrFailed, key)
				}
				if buf[i] == '"' {
					quoted = true
					i++
				}
			case isLWS(b):
				i = skipLWS(buf, i+1)
				if i >= len(buf) || buf[i] != '=' {
					return nil, fmt.Errorf("%w: '=' expected after %q", ErrFailed, key)
				}
			default:
				key = append(key, b)
				i++
			}
		case quoted:
			switch b {
			case '\\':
				i++
				if i >= len(buf) {
					return nil, fmt.Errorf("%w: unmatched quote in %q", ErrFailed, key)
				}
				value = append(value, buf[i])
				i++
			case '"':
				i++
				quoted, expectSep = false, true
			default:
				value = append(value, b)
				i++
			}
		case isLWS(b) || b == ',':
			if err := store(); err != nil {
				return nil, err
			}
			gettingKey, quoted, expectSep = true, false, false
			i = skipLWS(buf, i+1)
		case expectSep:
			return nil, fmt.Errorf("%w: a comma expected after the quoted value of %q", ErrFailed, key)
		default:
			value = append(value, b)
			i++
		}
	}
	if quoted {
		return nil, fmt.Errorf("%w: unmatched quote in %q", ErrFailed, key)
	}
	if len(key) > 0 {
		if err := store(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func isLWS(b byte) bool { return b == '\r' || b == '\n' || b == ' ' || b == '\t' }

func skipLWS(buf []byte, i int) int {
	for i < len(buf) && isLWS(buf[i]) {
		i++
	}
	return i
}

// quote writes s as the inside of a quoted string: a backslash before '"',
// '\\', DEL and the control characters other than CR, HT and LF.
func quote(b *bytes.Buffer, s []byte) {
	for _, c := range s {
		if c == '"' || c == '\\' || c == 127 || (c <= 31 && c != 13 && c != 9 && c != 10) {
			b.WriteByte('\\')
		}
		b.WriteByte(c)
	}
}

// latin1OrUTF8 encodes s as DigestMD5Base.stringToByte_8859_1 does for a
// user name, realm or password: ISO 8859-1 when every character fits,
// else UTF-8. Bytes that are not UTF-8 read as U+FFFD, as Java decodes them.
func latin1OrUTF8(s string) []byte {
	rs := []rune(s) // each byte that is not UTF-8 becomes U+FFFD
	out := make([]byte, 0, len(rs))
	for _, r := range rs {
		if r > 0xff {
			return []byte(string(rs))
		}
		out = append(out, byte(r))
	}
	return out
}

// responseValue computes a response-value (RFC 2831 2.1.2.1) for qop
// "auth" and nonce-count 1: method "AUTHENTICATE" for the client's
// response, "" for the server's rspauth. authzid nil means none.
func responseValue(method, digestURI, user, realm, password string, nonce, cnonce, authzid []byte) []byte {
	a2 := md5.Sum([]byte(method + ":" + digestURI))
	var b bytes.Buffer
	b.Write(latin1OrUTF8(user))
	b.WriteByte(':')
	b.Write(latin1OrUTF8(realm))
	b.WriteByte(':')
	b.Write(latin1OrUTF8(password))
	secret := md5.Sum(b.Bytes())
	b.Reset()
	b.Write(secret[:])
	b.WriteByte(':')
	b.Write(nonce)
	b.WriteByte(':')
	b.Write(cnonce)
	if authzid != nil {
		b.WriteByte(':')
		b.Write(authzid)
	}
	a1 := md5.Sum(b.Bytes())
	b.Reset()
	b.WriteString(hex.EncodeToString(a1[:]))
	b.WriteByte(':')
	b.Write(nonce)
	b.WriteString(":00000001:")
	b.Write(cnonce)
	b.WriteString(":auth:")
	b.WriteString(hex.EncodeToString(a2[:]))
	kd := md5.Sum(b.Bytes())
	return []byte(hex.EncodeToString(kd[:]))
}
