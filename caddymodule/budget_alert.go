package caddymodule

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/louter/louter/limits"
)

// A budget with budget_alert warns before it refuses: when a settled
// request leaves the budget's window at or over the threshold, the first
// instance to see it (a marker counter in the limit store, Redis when
// shared) logs a warning and, with alert_webhook set, POSTs the alert
// there, once per window. The check reads the window's spend once per
// settled request of such a budget, after the answer was sent; once an
// instance alerted for a window, it skips the read until the window ends.

// webhookTimeout bounds one POST of an alert.
const webhookTimeout = 5 * time.Second

// budgetAlerts posts a handler's budget alerts.
type budgetAlerts struct {
	webhook string
	client  *http.Client
	logger  *zap.Logger
	// done holds, by scope and percentage, the end of the window this
	// instance alerted for (or found alerted), so it reads no more.
	mu   sync.Mutex
	done map[string]time.Time
}

// budgetAlertPayload is the JSON POSTed to alert_webhook. It names the
// client and the scope, never a key.
type budgetAlertPayload struct {
	Client           string    `json:"client"`
	Scope            string    `json:"scope"`
	BudgetUSD        float64   `json:"budget_usd"`
	SpentUSD         float64   `json:"spent_usd"`
	ThresholdPercent int       `json:"threshold_percent"`
	WindowEnd        time.Time `json:"window_end"`
}

// parsePercent reads "80%" or "80" (1 to 100).
func parsePercent(s string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s), "%")))
	if err != nil || n < 1 || n > 100 {
		return 0, fmt.Errorf("want a percentage from 1%% to 100%%, not %q", s)
	}
	return n, nil
}

// provisionAlerts checks alert_webhook and sets up the alerts.
func (a *access) provisionAlerts(l *Louter) error {
	if l.AlertWebhook != "" {
		u, err := url.Parse(l.AlertWebhook)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return errors.New("alert_webhook: want an http:// or https:// URL")
		}
	}
	a.alerts = &budgetAlerts{webhook: l.AlertWebhook, client: &http.Client{Timeout: webhookTimeout}, logger: l.logger, done: map[string]time.Time{}}
	return nil
}

// check alerts, once, when h's budget window reached percent. b may be
// nil (no access).
func (b *budgetAlerts) check(ctx context.Context, c *clientEntry, h *limits.Reservation, percent int) {
	if b == nil {
		return
	}
	end := h.BudgetWindowEnd()
	scopeKey := h.Scope() + "/" + strconv.Itoa(percent)
	b.mu.Lock()
	if !b.done[scopeKey].Before(end) {
		b.mu.Unlock()
		return
	}
	b.mu.Unlock()
	alert, err := h.BudgetAlert(ctx, percent)
	if err != nil {
		b.logger.Debug("checking a budget alert failed", zap.Error(err))
		return
	}
	if alert == nil {
		return
	}
	b.mu.Lock()
	b.done[scopeKey] = end
	for k, t := range b.done { // windows that ended
		if t.Before(time.Now()) {
			delete(b.done, k)
		}
	}
	b.mu.Unlock()
	name := ""
	if c != nil {
		name = c.name
	}
	p := budgetAlertPayload{Client: name, Scope: alert.Scope, BudgetUSD: float64(alert.Limit) / 1e6, SpentUSD: float64(alert.Spent) / 1e6,
		ThresholdPercent: alert.Percent, WindowEnd: alert.WindowEnd.UTC()}
	b.logger.Warn("budget alert: spend crossed the threshold", zap.String("client", p.Client), zap.String("scope", p.Scope),
		zap.String("budget", limits.FormatUSD(alert.Limit)), zap.String("spent", limits.FormatUSD(alert.Spent)),
		zap.Int("threshold_percent", p.ThresholdPercent), zap.Time("window_end", p.WindowEnd))
	if b.webhook != "" {
		go b.post(p)
	}
}

// post sends one alert to the webhook, within webhookTimeout.
func (b *budgetAlerts) post(p budgetAlertPayload) {
	body, _ := json.Marshal(p)
	ctx, cancel := context.WithTimeout(context.Background(), webhookTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, b.webhook, bytes.NewReader(body))
	if err != nil {
		return
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := b.client.Do(req)
	if err != nil {
		// Not the url.Error itself: a webhook URL often holds a secret
		// token (Slack's, for one), and it would print it.
		if ue, ok := errors.AsType[*url.Error](err); ok {
			err = ue.Err
		}
		b.logger.Error("budget alert: the webhook failed", zap.String("scope", p.Scope), zap.Error(err))
		return
	}
	resp.Body.Close()
	if resp.StatusCode >= 300 {
		b.logger.Error("budget alert: the webhook refused the alert", zap.String("scope", p.Scope), zap.Int("status", resp.StatusCode))
	}
}
