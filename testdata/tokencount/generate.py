#!/usr/bin/env python3
"""Builds the token-counting corpus: Anthropic Messages requests shaped like
a coding agent's turns (system prose, tool definitions with JSON schemas,
tool calls, and tool results holding code, JSON, shell output, diffs and
prose in several languages), from this repository's own files so the corpus
carries no third-party text. Run from the repository root:

    python3 testdata/tokencount/generate.py
"""
import json, os, subprocess

OUT = "testdata/tokencount"

def read(path, limit=None):
    with open(path, encoding="utf-8") as f:
        s = f.read()
    return s[:limit] if limit else s

def sh(*args):
    return subprocess.run(args, capture_output=True, text=True).stdout

def schema(props, required):
    return {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
            "properties": props, "required": required, "additionalProperties": False}

TOOLS = [
    {"name": "Bash", "description": "Executes a given bash command in a persistent shell session with an optional timeout, ensuring proper handling and security measures.\n\nBefore executing the command, verify that the parent directory exists. Always quote file paths that contain spaces. Prefer the dedicated search tools over grep and find.",
     "input_schema": schema({"command": {"type": "string", "description": "The command to execute"},
                             "timeout": {"type": "number", "description": "Optional timeout in milliseconds (max 600000)", "exclusiveMinimum": 0},
                             "description": {"type": "string", "description": "Clear, concise description of what this command does in 5-10 words"},
                             "run_in_background": {"type": "boolean"}}, ["command"])},
    {"name": "Read", "description": "Reads a file from the local filesystem. The file_path parameter must be an absolute path. By default, it reads up to 2000 lines starting from the beginning of the file. Results are returned using cat -n format, with line numbers starting at 1.",
     "input_schema": schema({"file_path": {"type": "string", "description": "The absolute path to the file to read"},
                             "offset": {"type": "integer", "minimum": 0}, "limit": {"type": "integer", "exclusiveMinimum": 0}}, ["file_path"])},
    {"name": "Edit", "description": "Performs exact string replacements in files. The edit will FAIL if old_string is not unique in the file. Use replace_all to change every instance.",
     "input_schema": schema({"file_path": {"type": "string"}, "old_string": {"type": "string", "description": "The text to replace"},
                             "new_string": {"type": "string", "description": "The text to replace it with (must be different from old_string)"},
                             "replace_all": {"type": "boolean", "default": False}}, ["file_path", "old_string", "new_string"])},
    {"name": "Grep", "description": "A powerful search tool built on ripgrep. Supports full regex syntax (e.g., \"log.*Error\", \"function\\\\s+\\\\w+\"). Filter files with glob or type.",
     "input_schema": schema({"pattern": {"type": "string"}, "path": {"type": "string"}, "glob": {"type": "string"},
                             "output_mode": {"type": "string", "enum": ["content", "files_with_matches", "count"]},
                             "-n": {"type": "boolean"}, "-i": {"type": "boolean"}, "head_limit": {"type": "number"}}, ["pattern"])},
    {"name": "Glob", "description": "Fast file pattern matching tool that works with any codebase size. Supports glob patterns like \"**/*.js\" or \"src/**/*.ts\".",
     "input_schema": schema({"pattern": {"type": "string"}, "path": {"type": "string"}}, ["pattern"])},
    {"name": "TodoWrite", "description": "Use this tool to create and manage a structured task list for your current coding session.",
     "input_schema": schema({"todos": {"type": "array", "items": {"type": "object", "properties": {
         "content": {"type": "string", "minLength": 1}, "status": {"type": "string", "enum": ["pending", "in_progress", "completed"]},
         "activeForm": {"type": "string", "minLength": 1}}, "required": ["content", "status", "activeForm"], "additionalProperties": False}}}, ["todos"])},
    {"name": "WebFetch", "description": "Fetches content from a specified URL and processes it using an AI model.",
     "input_schema": schema({"url": {"type": "string", "format": "uri"}, "prompt": {"type": "string"}}, ["url", "prompt"])},
]

def tool_use(i, name, args):
    return {"type": "tool_use", "id": "toolu_%02d" % i, "name": name, "input": args}

def tool_result(i, content):
    return {"type": "tool_result", "tool_use_id": "toolu_%02d" % i, "content": content}

def numbered(src):
    return "\n".join("%6d\t%s" % (n + 1, line) for n, line in enumerate(src.splitlines()))

def request(system, turns, tools=TOOLS):
    return {"model": "claude-sonnet-4-5", "max_tokens": 32000, "stream": True,
            "system": [{"type": "text", "text": system}], "tools": tools, "messages": turns}

def write(name, req):
    with open(os.path.join(OUT, name), "w", encoding="utf-8") as f:
        json.dump(req, f, ensure_ascii=False, indent=1)
        f.write("\n")

readme = read("README.md")
system = "You are an interactive CLI tool that helps users with software engineering tasks.\n\n" + readme[:6000]

# 1. A Go coding session: read, grep, edit, test.
handler = read("caddymodule/handler.go")
write("agent_go_session.json", request(system, [
    {"role": "user", "content": "The handler answers 200 with an empty body for count_tokens. Find where requests are dispatched and fix it."},
    {"role": "assistant", "content": [
        {"type": "thinking", "thinking": "I should read the handler first and look for the dispatch on the path.", "signature": "c2lnbmF0dXJl"},
        tool_use(1, "Read", {"file_path": "/work/caddymodule/handler.go"})]},
    {"role": "user", "content": [tool_result(1, numbered(handler))]},
    {"role": "assistant", "content": [tool_use(2, "Grep", {"pattern": "func .*ServeHTTP|detectClient", "path": "/work", "output_mode": "content", "-n": True})]},
    {"role": "user", "content": [tool_result(2, sh("git", "grep", "-n", "-E", "func .*ServeHTTP|detectClient|clientEndpoints"))]},
    {"role": "assistant", "content": [{"type": "text", "text": "The dispatch happens in `detectClient`. I'll add a case for the counting endpoint."},
        tool_use(3, "Edit", {"file_path": "/work/caddymodule/routes.go", "old_string": handler[1200:1700], "new_string": handler[1200:1700] + "\n\t// count_tokens is answered before the chat path.\n"})]},
    {"role": "user", "content": [tool_result(3, "The file /work/caddymodule/routes.go has been updated.")]},
    {"role": "assistant", "content": [tool_use(4, "Bash", {"command": "go test ./caddymodule -run TestCount -count=1", "description": "Run the counting tests"})]},
    {"role": "user", "content": [tool_result(4, sh("git", "log", "--stat", "-n", "12"))]},
]))

# 2. JSON-heavy tool results: fixtures and goldens.
jsons = [p for p in sorted(os.listdir("testdata/openai_chat")) if p.endswith(".json")][:8]
turns = [{"role": "user", "content": "Compare the OpenAI fixtures with the Anthropic ones and tell me which fields differ."}]
for i, p in enumerate(jsons):
    turns.append({"role": "assistant", "content": [tool_use(10 + i, "Read", {"file_path": "/work/testdata/openai_chat/" + p})]})
    turns.append({"role": "user", "content": [tool_result(10 + i, read("testdata/openai_chat/" + p))]})
turns.append({"role": "assistant", "content": [tool_use(30, "Read", {"file_path": "/work/testdata/anthropic/request_features.json"})]})
turns.append({"role": "user", "content": [tool_result(30, read("testdata/anthropic/request_features.json"))]})
write("json_tool_results.json", request(system[:2000], turns))

# 3. Shell output and diffs.
turns = [{"role": "user", "content": "What changed in the last commits? Summarise the diffs."}]
for i, rev in enumerate(["HEAD~1", "HEAD~3", "HEAD~6"]):
    turns.append({"role": "assistant", "content": [tool_use(40 + i, "Bash", {"command": "git show " + rev, "description": "Show a commit"})]})
    turns.append({"role": "user", "content": [tool_result(40 + i, sh("git", "show", rev)[:20000])]})
write("shell_and_diffs.json", request(system[:3000], turns))

# 4. Prose and markdown, several languages.
multi = read(os.path.join(OUT, "multilingual.txt"))
turns = [
    {"role": "user", "content": [{"type": "text", "text": multi}]},
    {"role": "assistant", "content": "Here is a summary of the design notes, section by section."},
    {"role": "user", "content": [{"type": "text", "text": readme[6000:36000]}]},
]
write("prose_multilingual.json", request("Answer in the user's language.", turns, tools=[]))

# 5. Go and test sources, many files.
srcs = ["translate/ir.go", "translate/codec.go", "stream/sse.go", "caddymodule/routes.go", "caddymodule/errors.go", "translate/emitter.go"]
turns = [{"role": "user", "content": "Review these files for bugs."}]
for i, p in enumerate(srcs):
    turns.append({"role": "assistant", "content": [tool_use(50 + i, "Read", {"file_path": "/work/" + p})]})
    turns.append({"role": "user", "content": [tool_result(50 + i, numbered(read(p)))]})
write("go_sources.json", request(system[:1500], turns))
