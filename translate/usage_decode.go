package translate

import (
	"bytes"

	"github.com/tidwall/gjson"
)

// usageKeys are the members protocols' JSON responses report usage in.
var usageKeys = map[Protocol][]byte{
	ProtocolAnthropic:       []byte(`"usage"`),
	ProtocolOpenAIChat:      []byte(`"usage"`),
	ProtocolOpenAIResponses: []byte(`"usage"`),
	ProtocolGemini:          []byte(`"usageMetadata"`),
}

// UsageFromTail finds the usage a JSON response of protocol p reported in
// the response's last bytes (every protocol puts it at or near the end,
// after the content), without parsing the whole body: the last usage
// member of tail whose object is complete. A quoted "usage" inside a
// string is escaped (\"usage\"), so only a member name matches.
func UsageFromTail(p Protocol, tail []byte) (Usage, bool) {
	key := usageKeys[p]
	if key == nil {
		return Usage{}, false
	}
	for end := len(tail); end > 0; {
		i := bytes.LastIndex(tail[:end], key)
		if i < 0 {
			return Usage{}, false
		}
		end = i
		rest := bytes.TrimLeft(tail[i+len(key):], " \t\r\n")
		if len(rest) == 0 || rest[0] != ':' {
			continue
		}
		v := gjson.ParseBytes(bytes.TrimLeft(rest[1:], " \t\r\n"))
		if !v.IsObject() || !bytes.HasSuffix([]byte(v.Raw), []byte("}")) {
			continue
		}
		switch p {
		case ProtocolAnthropic:
			var u anthUsage
			if u.merge(v) {
				return u.ir(), true
			}
		case ProtocolOpenAIChat:
			return oaiDecodeUsage(v), true
		case ProtocolOpenAIResponses:
			return respDecodeUsage(v), true
		case ProtocolGemini:
			return geminiDecodeUsage(v), true
		}
	}
	return Usage{}, false
}
