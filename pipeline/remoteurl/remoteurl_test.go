package remoteurl

import (
	"strings"
	"testing"
)

// TestParseKeepsCredentialsOut refuses every place a credential can hide
// in a remote's URL, and checks that no message prints it.
func TestParseKeepsCredentialsOut(t *testing.T) {
	const secret = "p4ss"
	for _, tt := range []struct {
		url  string
		want string // "" for a URL that is accepted
	}{
		{"s3://bucket/x?region=us-east-1&endpoint=http://127.0.0.1:9", ""},
		{"file:///srv/shared", ""},
		{"s3://user:" + secret + "@bucket/x", "the URL carries credentials"},
		{"s3://bucket/x?endpoint=http://u:" + secret + "@127.0.0.1:9&region=us-east-1", `the parameter "endpoint" carries credentials`},
		{"s3://bucket/x?region=us-east-1&secret_access_key=" + secret, `the parameter "secret_access_key" names a credential`},
		{"s3://bucket/x?AWS-Session-Token=" + secret, `the parameter "AWS-Session-Token" names a credential`},
		{"s3://bucket/x?password=" + secret, `the parameter "password" names a credential`},
		{"s3://u:" + secret + "@bucket/%zz", "not a URL"},
		{"s3://bucket/x?a=%zz" + secret, "its query is not valid"},
	} {
		_, err := Parse(tt.url)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("Parse(%q) = %v, want it accepted", tt.url, err)
		case tt.want == "":
		case err == nil || !strings.Contains(err.Error(), tt.want):
			t.Errorf("Parse(%q) = %v, want an error saying %q", tt.url, err, tt.want)
		case strings.Contains(err.Error(), secret):
			t.Errorf("Parse(%q)'s error prints the credential: %v", tt.url, err)
		}
	}
}
