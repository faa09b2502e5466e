package zkmem

import (
	"crypto/rand"
	"errors"
	"regexp"
	"slices"
	"strings"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/internal/digestmd5"
)

// SASL and the super user: the SASL request (op 102) that a real server
// with a JAAS Server section answers with DIGEST-MD5, the identity it
// gives, the "sasl" ACL scheme (SASLAuthenticationProvider), and the
// superDigest of DigestAuthenticationProvider.

// sasl runs one step of the SASL exchange of sess's connection
// (ZooKeeperServer.processSasl), the mechanism being DIGEST-MD5 as Java's
// provider runs it for ZooKeeper. Without SASL users there is no SASL
// server: the request is answered OK with no token. A null token (nil
// Auth) closes the connection unanswered, configured or not. A failed step is
// answered ErrAuthFailed and the connection closes (the session lives
// on); a response Java's provider fails on with a runtime exception (a
// maxbuf or nonce-count that is not a number) closes the connection
// unanswered. Once the exchange completes the connection has the identity
// sasl:USER, and any further SASL request on it fails. Called with srv.mu
// held.
func (s *Server) sasl(sess *Session, req *Request, resp *Response) {
	if req.Auth == nil {
		// A null token: processSasl fails on it before it looks for a SASL
		// server, and the connection closes unanswered.
		resp.unanswered = true
		return
	}
	if s.opts.SASLUsers == nil {
		return
	}
	if sess.sasl == nil {
		sess.sasl = digestmd5.NewServer(s.saslPassword, rand.Reader)
	}
	tok, err := sess.sasl.Step(req.Auth)
	switch {
	case errors.Is(err, digestmd5.ErrMalformed):
		resp.unanswered = true
	case err != nil:
		resp.Err, resp.Closed = zksim.ErrAuthFailed, true
	default:
		resp.Token = tok
		if sess.sasl.Complete() {
			// SaslServerCallbackHandler.handleAuthorizeCallback: the
			// authentication id, a plain name for DIGEST-MD5.
			sess.addAuth(authID{scheme: "sasl", id: sess.sasl.User()})
		}
	}
}

// resetSASL starts the SASL of a new connection of sess: no exchange yet,
// and no sasl identity (a real server keeps both on the connection, its
// ServerCnxn). Called with srv.mu held.
func (sess *Session) resetSASL() {
	sess.sasl = nil
	sess.auth = slices.DeleteFunc(sess.auth, func(a authID) bool { return a.scheme == "sasl" })
}

// saslPassword looks up a SASL user's password. Unlike a real 3.8.0
// server, an unknown user is refused: its SaslServerCallbackHandler,
// shared by every connection, keeps the last known user name it looked
// up and hands out that user's password for an unknown one, so that an
// unknown name with the password of the user looked up before it
// authenticates (as the unknown name).
func (s *Server) saslPassword(user string) (string, bool) {
	pw, ok := s.opts.SASLUsers[user]
	return pw, ok
}

// superDigest reports whether id is the digest identity of the configured
// superDigest (DigestAuthenticationProvider.handleAuthentication adds the
// identity super:"" with it).
func (s *Server) superDigest(id authID) bool {
	return s.opts.SuperDigest != "" && id.scheme == "digest" && id.id == s.opts.SuperDigest
}

// saslMatches mirrors SASLAuthenticationProvider.matches (without
// zookeeper.letAnySaslUserDoX): the SASL user "super" matches every sasl
// ACL.
func saslMatches(id, aclExpr string) bool { return id == "super" || id == aclExpr }

// kerberosName is KerberosName's parser: service[/host]@REALM.
var kerberosName = regexp.MustCompile(`^[^/@]*(/[^/@]*)?@[^/@]*$`)

// validSASLID mirrors SASLAuthenticationProvider.isValid: a name KerberosName
// accepts, that is any name without '@', or one of the form
// service[/host]@REALM.
func validSASLID(id string) bool {
	return !strings.Contains(id, "@") || kerberosName.MatchString(id)
}
