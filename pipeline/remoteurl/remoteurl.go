// Package remoteurl checks the URL of a shared remote (package remote)
// without linking an object store's client: the configuration and the
// lean command line use it.
package remoteurl

import (
	"fmt"
	"net/url"
	"strings"
)

// Parse checks a remote's URL without opening it: a scheme this
// package serves, no credentials, and a bucket or an absolute directory.
func Parse(rawURL string) (*url.URL, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("remote: %w", err)
	}
	if u.User != nil {
		return nil, fmt.Errorf("remote %s://%s…: the URL carries credentials; take them out and give them in the AWS environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, or ~/.aws/credentials)", u.Scheme, u.Host)
	}
	where := u.Redacted()
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
