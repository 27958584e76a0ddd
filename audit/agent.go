package audit

import (
	"fmt"
	"net"
	"os"
	"strings"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"
)

// AgentKey is the audit_signing_key that asks the ssh-agent: "ssh-agent"
// signs with the agent's first ed25519 key, "ssh-agent:SHA256:…" with
// the one of that fingerprint. The private key never leaves the agent.
const AgentKey = "ssh-agent"

// IsAgentKey reports whether spec names the ssh-agent rather than a file.
func IsAgentKey(spec string) bool { return spec == AgentKey || strings.HasPrefix(spec, AgentKey+":") }

// LoadAgentKey finds the signing key spec names in the agent that
// SSH_AUTH_SOCK reaches. The connection stays open for the signatures
// the process makes.
func LoadAgentKey(spec string) (*SigningKey, error) {
	sock := os.Getenv("SSH_AUTH_SOCK")
	if sock == "" {
		return nil, fmt.Errorf("audit signing key %s: SSH_AUTH_SOCK is not set, so there is no agent to ask (ssh-agent, then ssh-add the key)", spec)
	}
	conn, err := net.Dial("unix", sock)
	if err != nil {
		return nil, fmt.Errorf("audit signing key %s: the agent at SSH_AUTH_SOCK does not answer: %v", spec, err)
	}
	signers, err := agent.NewClient(conn).Signers()
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("audit signing key %s: listing the agent's keys: %v", spec, err)
	}
	want := strings.TrimPrefix(spec[len(AgentKey):], ":")
	for _, s := range signers {
		pub := s.PublicKey()
		if pub.Type() != ssh.KeyAlgoED25519 || (want != "" && ssh.FingerprintSHA256(pub) != want) {
			continue
		}
		return &SigningKey{signer: s}, nil
	}
	conn.Close()
	if want != "" {
		return nil, fmt.Errorf("audit signing key %s: the agent holds no ed25519 key %s (ssh-add -l lists its keys)", spec, want)
	}
	return nil, fmt.Errorf("audit signing key %s: the agent holds no ed25519 key (ssh-keygen -t ed25519, then ssh-add it)", spec)
}
