package audit

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strings"
	"unicode"

	"golang.org/x/crypto/ssh"
)

// AllowedSigners are the keys whose checkpoints Verify trusts, read from
// a file in OpenSSH's allowed_signers format (ssh-keygen(1)): one signer
// a line, "principals [options] key-type base64-key [comment]", blank
// lines and lines starting with # ignored. The principals name the
// signer in Verify's report. Certificate authorities are refused: each
// signer's own key is listed.
type AllowedSigners struct {
	signers []allowedSigner
}

type allowedSigner struct {
	principals string
	key        ssh.PublicKey
}

// ParseAllowedSigners reads an allowed_signers file; name is for errors.
func ParseAllowedSigners(r io.Reader, name string) (*AllowedSigners, error) {
	var out AllowedSigners
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		principals, rest := cutPrincipals(text)
		key, _, options, _, err := ssh.ParseAuthorizedKey([]byte(rest))
		if principals == "" || err != nil {
			return nil, fmt.Errorf("%s, line %d: want `principal key-type base64-key`, as ssh-keygen's allowed_signers", name, line)
		}
		for _, o := range options {
			if strings.EqualFold(o, "cert-authority") {
				return nil, fmt.Errorf("%s, line %d: a certificate authority cannot sign checkpoints; list the signer's own key", name, line)
			}
		}
		out.signers = append(out.signers, allowedSigner{principals: principals, key: key})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(out.signers) == 0 {
		return nil, fmt.Errorf("%s lists no signer: want lines `principal key-type base64-key`", name)
	}
	return &out, nil
}

// cutPrincipals splits off a line's first field, which may be quoted.
func cutPrincipals(line string) (principals, rest string) {
	if q, ok := strings.CutPrefix(line, `"`); ok {
		p, rest, ok := strings.Cut(q, `"`)
		if !ok {
			return "", ""
		}
		return p, strings.TrimSpace(rest)
	}
	i := strings.IndexFunc(line, unicode.IsSpace)
	if i < 0 {
		return line, ""
	}
	return line[:i], strings.TrimSpace(line[i:])
}

func (a *AllowedSigners) find(key ssh.PublicKey) (allowedSigner, bool) {
	want := key.Marshal()
	for _, s := range a.signers {
		if bytes.Equal(s.key.Marshal(), want) {
			return s, true
		}
	}
	return allowedSigner{}, false
}
