package zksim

import (
	"crypto/sha1"
	"encoding/base64"
	"fmt"
)

// Permission bits of an ACL entry (ZooDefs.Perms).
const (
	PermRead   int32 = 1 << 0
	PermWrite  int32 = 1 << 1
	PermCreate int32 = 1 << 2
	PermDelete int32 = 1 << 3
	PermAdmin  int32 = 1 << 4
	PermAll    int32 = PermRead | PermWrite | PermCreate | PermDelete | PermAdmin
)

// ACL is one access control entry: who (Scheme and ID) may do what (Perms).
type ACL struct {
	Perms  int32
	Scheme string
	ID     string
}

func (a ACL) String() string { return fmt.Sprintf("%s:%s:%s", a.Scheme, a.ID, permString(a.Perms)) }

func permString(p int32) string {
	const letters = "rwcda"
	b := make([]byte, 0, 5)
	for i := 0; i < 5; i++ {
		if p&(1<<i) != 0 {
			b = append(b, letters[i])
		}
	}
	return string(b)
}

// WorldACL grants perms to everyone (scheme "world", id "anyone").
func WorldACL(perms int32) []ACL { return []ACL{{Perms: perms, Scheme: "world", ID: "anyone"}} }

// OpenACL is ZooDefs.Ids.OPEN_ACL_UNSAFE: every permission to everyone.
func OpenACL() []ACL { return WorldACL(PermAll) }

// ReadACL is ZooDefs.Ids.READ_ACL_UNSAFE: read for everyone.
func ReadACL() []ACL { return WorldACL(PermRead) }

// CreatorACL is ZooDefs.Ids.CREATOR_ALL_ACL: every permission to the
// identities the creating session has authenticated as ("auth" scheme).
func CreatorACL(perms int32) []ACL { return []ACL{{Perms: perms, Scheme: "auth", ID: ""}} }

// DigestACL grants perms to the digest identity of user and password.
func DigestACL(perms int32, user, password string) []ACL {
	return []ACL{{Perms: perms, Scheme: "digest", ID: DigestID(user, password)}}
}

// DigestID returns the id ZooKeeper's digest scheme derives from a user and
// password: "user:" + base64(sha1("user:password")).
func DigestID(user, password string) string {
	sum := sha1.Sum([]byte(user + ":" + password))
	return user + ":" + base64.StdEncoding.EncodeToString(sum[:])
}
