// Package remoteurl checks the URL of a shared remote (package remote)
// without linking an object store's client: the configuration and the
// lean command line use it.
package remoteurl

import (
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"

	"github.com/mlsched/mlsched/pipeline/config"
)

// Parse checks a remote's URL without opening it: a scheme this
// package serves, no credentials, and a bucket or an absolute directory.
//
// A credential never belongs in the URL, which the config, the lock file
// and every message repeat: userinfo in the URL or in any parameter's
// value (endpoint=http://user:pass@host), or a parameter whose name says
// it holds one (secret_access_key=…), is refused, and the message names
// where it was without printing it. No message here prints the URL's
// query or userinfo.
func Parse(rawURL string) (*url.URL, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		// url.Error's text repeats the whole URL; its cause does not.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("remote: not a URL: %w", err)
	}
	const elsewhere = "take them out and give them in the AWS environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, or ~/.aws/credentials)"
	if u.User != nil {
		return nil, fmt.Errorf("remote %s://%s…: the URL carries credentials; %s", u.Scheme, u.Host, elsewhere)
	}
	where := (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}).String()
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return nil, fmt.Errorf("remote %s: its query is not valid: %w", where, err)
	}
	for _, name := range slices.Sorted(maps.Keys(q)) {
		if config.CredentialName(name) {
			return nil, fmt.Errorf("remote %s: the parameter %q names a credential; %s", where, name, elsewhere)
		}
		for _, v := range q[name] {
			if pu, err := url.Parse(v); err == nil && pu.User != nil {
				return nil, fmt.Errorf("remote %s: the parameter %q carries credentials; %s", where, name, elsewhere)
			}
		}
	}
	switch u.Scheme {
	case "s3":
		if u.Host == "" {
			return nil, fmt.Errorf("remote %s: an S3 remote is s3://bucket/prefix", where)
		}
		if u.Query().Get("prefix") != "" && strings.Trim(u.Path, "/") != "" {
			return nil, fmt.Errorf("remote %s: give the prefix as the URL's path or as prefix=, not both", where)
		}
	case "file":
		if u.Host != "" || !strings.HasPrefix(u.Path, "/") {
			return nil, fmt.Errorf("remote %s: a file remote is file:///absolute/path", where)
		}
	case "mem":
	default:
		return nil, fmt.Errorf("remote %s: unknown scheme %q (use s3://bucket/prefix, or file:///path for a shared file system)", where, u.Scheme)
	}
	return u, nil
}
