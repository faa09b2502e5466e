package zkmem_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zksim/zksim/zkmem"
)

func TestParseJAAS(t *testing.T) {
	const file = `
// ZooKeeper's server section, as its documentation shows it.
Server {
    org.apache.zookeeper.server.auth.DigestLoginModule required
    user_super="adminsecret"
    user_bob="bob\"s \\pw"   /* escapes */
    debug=true;
    com.example.Other optional user_carol=bare-word_1.0;
};
Client {
    org.apache.zookeeper.server.auth.DigestLoginModule required
    username="bob" password="bobpw" user_client="not a server user";
};
`
	users, err := zkmem.ParseJAAS([]byte(file), "Server")
	require.NoError(t, err)
	require.Equal(t, map[string]string{"super": "adminsecret", "bob": `bob"s \pw`, "carol": "bare-word_1.0"}, users)

	users, err = zkmem.ParseJAAS([]byte("Server { };"), "Server")
	require.NoError(t, err)
	require.NotNil(t, users)
	require.Empty(t, users)

	for _, tc := range []struct{ in, want string }{
		{file, `jaas: no section "Quorum"`},
		{"Server { M required a=b; }", "line 1: expected ';', found the end of the file"},
		{"Server { M sometimes; };", `login module M: expected a flag`},
		{"Server {\n M required user_a=\"x\n\"; };", "line 2: unterminated string"},
		{"Server { M required user_a; };", `line 1: expected '=', found ";"`},
		{"Server { M required user_a=; };", `option user_a: expected a value, found ";"`},
		{"Server { M required user_a=b };", `expected an option name or ';', found "}"`},
		{"/* open", "unterminated comment"},
		{"Server ( };", `unexpected character '('`},
		{"{ };", `expected a section name, found "{"`},
	} {
		section := "Server"
		if strings.Contains(tc.want, "Quorum") {
			section = "Quorum"
		}
		_, err := zkmem.ParseJAAS([]byte(tc.in), section)
		require.ErrorContains(t, err, tc.want, "%q", tc.in)
	}
}
