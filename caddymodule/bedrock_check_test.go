package caddymodule

import (
	"strings"
	"testing"

	"github.com/louter/louter/internal/cloudmock"
)

// TestCheckConfigBedrock: check knows the bedrock protocol and reports
// the unset variables an auth module's settings name.
func TestCheckConfigBedrock(t *testing.T) {
	cloudmock.IsolateAWSEnv(t)
	cfg := `{"apps": {"http": {"servers": {"s": {"routes": [{"handle": [{"handler": "louter",
		"backends": {"b": {"protocol": "bedrock", "upstream": {"handler": "reverse_proxy", "upstreams": [{"dial": "127.0.0.1:1"}]},
			"auth": {"method": "aws_sigv4", "region": "us-east-1", "access_key_id": "{env.LOUTER_TEST_UNSET_AK}", "secret_access_key": "{env.LOUTER_TEST_UNSET_SK}"}}},
		"models": [{"match": "*", "backend": "b", "rename": "us.anthropic.claude-x-v1:0"}]}]}]}}}}}`
	problems, err := CheckConfig([]byte(cfg))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`backend "b": auth access_key_id names the environment variable LOUTER_TEST_UNSET_AK, which is not set`,
		`backend "b": auth secret_access_key names the environment variable LOUTER_TEST_UNSET_SK, which is not set`,
	}
	if len(problems) != len(want) {
		t.Fatalf("problems:\n%s", strings.Join(problems, "\n"))
	}
	for i, w := range want {
		if !strings.Contains(problems[i], w) {
			t.Errorf("problem %d: %s, want %s", i, problems[i], w)
		}
	}
}
