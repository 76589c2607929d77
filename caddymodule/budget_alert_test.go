package caddymodule

import (
	"context"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"go.uber.org/zap"
)

// The settings of alerts and model limits are checked when the handler
// is provisioned, each error naming its setting.
func TestAlertSettings(t *testing.T) {
	key := sha256HexForTest("k")
	for _, tt := range []struct {
		name    string
		access  ClientAccess
		wantErr string
	}{
		{"alert without budget", ClientAccess{Clients: []*ClientKey{{Name: "a", KeySHA256: key, Limits: Limits{BudgetAlert: "80%"}}}}, "budget_alert: no budget to alert on"},
		{"alert over 100", ClientAccess{Clients: []*ClientKey{{Name: "a", KeySHA256: key, Limits: Limits{Budget: "1usd/1d", BudgetAlert: "120%"}}}}, "budget_alert: want a percentage"},
		{"webhook not http", ClientAccess{AlertWebhook: "ftp://x", Clients: []*ClientKey{{Name: "a", KeySHA256: key}}}, "alert_webhook: want an http"},
		{"model limit without match", ClientAccess{Clients: []*ClientKey{{Name: "a", KeySHA256: key, ModelLimits: []ModelLimit{{Limits: Limits{Requests: "1/1m"}}}}}}, "model_limits: an entry without match"},
		{"model limit bad rate", ClientAccess{Clients: []*ClientKey{{Name: "a", KeySHA256: key, ModelLimits: []ModelLimit{{Match: "x", Limits: Limits{Requests: "many"}}}}}}, `model_limits "x": requests`},
		{"all good", ClientAccess{AlertWebhook: "https://hooks.example.com/x", Clients: []*ClientKey{{Name: "a", KeySHA256: key,
			Limits: Limits{Budget: "1usd/1d", BudgetAlert: "80"}, ModelLimits: []ModelLimit{{Match: "x", Limits: Limits{Budget: "1usd/1d", BudgetAlert: "90%"}}}}}}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			l := &Louter{Backends: map[string]*Backend{"oai": {Protocol: "openai_chat"}}, ClientAccess: tt.access, logger: zap.NewNop()}
			ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
			defer cancel()
			err := l.provisionAccess(ctx)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				c := l.access.byName["a"]
				if c.alert != 80 || c.modelLimits[0].alert != 90 {
					t.Errorf("alerts %d and %d, want 80 and 90", c.alert, c.modelLimits[0].alert)
				}
				l.access.close()
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("error %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}
