package caddymodule

import "github.com/louter/louter/translate"

// passthroughBody edits a request passed on in the client's own protocol:
// the model rename, the max_tokens cap and the request for a stream's
// usage (translate.PassthroughBody, which record's Replay replays a
// passthrough exchange through).
var passthroughBody = translate.PassthroughBody
