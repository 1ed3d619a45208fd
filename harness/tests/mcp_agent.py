"""A scripted agent that plays a scenario through the harness's MCP face with the official Python
MCP SDK, the way a coding agent would: wait_for_wake, read, plan, dispatch, wait_for_wake, ...
It scouts the mission's fields in order and comes home, then checks that the run has ended and
that a tool is refused after the end. With --sleeps it sleeps known times before its first calls
(the harness charges them as thinking time). It prints one JSON report on stdout.

  python3 mcp_agent.py stdio BINARY ARG...      (starts `BINARY ARG...` as a stdio server)
  python3 mcp_agent.py http URL
  python3 mcp_agent.py second URL                (only tries to open a second session)
"""

import argparse
import asyncio
import json
import sys

from mcp import Client, StdioServerParameters


def text_of(result):
    return "\n".join(c.text for c in result.content if c.type == "text")


def detail(message):
    """The JSON line of a wake-up message."""
    for line in message.splitlines()[1:]:
        line = line.strip()
        if line.startswith("{"):
            return json.loads(line)
    return {}


def messages(e):
    """The messages of an exception and of every exception grouped in it."""
    out = [str(e)]
    for sub in getattr(e, "exceptions", ()):
        out.extend(messages(sub))
    return out


class Agent:
    def __init__(self, client, sleeps):
        self.client = client
        self.sleeps = list(sleeps)
        self.report = {"calls": [], "images": 0, "progress": 0, "progress_messages": [], "wakes": []}

    async def call(self, name, args=None):
        if self.sleeps:
            await asyncio.sleep(self.sleeps.pop(0))

        async def on_progress(progress, total, message):
            self.report["progress"] += 1
            if len(self.report["progress_messages"]) < 3:
                self.report["progress_messages"].append(message)

        r = await self.client.call_tool(name, args or {}, progress_callback=on_progress)
        images = [c for c in r.content if c.type == "image"]
        for im in images:
            assert im.mime_type == "image/png", im.mime_type
            self.report["images"] += 1
        if images:
            assert r.structured_content is None, "structuredContent beside an image"
        self.report["calls"].append({"name": name, "error": r.is_error, "images": len(images)})
        return r

    async def wait(self):
        r = await self.call("wait_for_wake")
        text = text_of(r)
        if r.is_error:
            return None, json.loads(text)
        self.report["wakes"].append(text.splitlines()[0])
        return detail(text), None

    async def skill(self, skill, arguments=None):
        args = {"skill": skill}
        if arguments:
            args["arguments"] = arguments
        r = await self.call("dispatch", args)
        assert not r.is_error, text_of(r)
        while True:
            d, ended = await self.wait()
            assert ended is None, ended
            if d.get("reason") == "skill_ended" and d.get("skill") == skill:
                assert d.get("code") == "succeeded", d
                return d

    async def play(self):
        tools = [t.name for t in (await self.client.list_tools()).tools]
        self.report["tools"] = tools
        self.report["instructions"] = bool(self.client.instructions)
        start, _ = await self.wait()
        fields = start.get("fields", [])
        await self.call("read", {"what": "vehicle"})
        if "plan" in tools:
            r = await self.call("plan", {"visits": fields, "return_home": True})
            assert not r.is_error, text_of(r)
        if "look" in tools:
            await self.call("look", {"view": "map"})
        for f in fields:
            await self.skill("goto", {"field": f})
            await self.skill("scout", {"field": f})
        await self.skill("return_home")
        # Ending the turn while no skill runs ends the run.
        _, ended = await self.wait()
        self.report["end"] = ended
        after = await self.call("read", {"what": "vehicle"})
        self.report["after_end"] = {"error": after.is_error, "text": text_of(after)}


async def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("how", choices=["stdio", "http", "second"])
    ap.add_argument("--sleeps", default="", help="comma-separated seconds to sleep before the first calls")
    ap.add_argument("target", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    sleeps = [float(s) for s in a.sleeps.split(",") if s]
    if a.how == "stdio":
        server = StdioServerParameters(command=a.target[0], args=a.target[1:])
    else:
        server = a.target[0]
    if a.how == "second":
        try:
            async with Client(server, mode="legacy") as c:
                await c.list_tools()
            print(json.dumps({"second": "accepted"}))
        except Exception as e:  # the refusal comes as an MCP error (in task groups)
            print(json.dumps({"second": "refused", "error": " | ".join(messages(e))}))
        return
    async with Client(server, mode="legacy", read_timeout_seconds=600) as c:
        print(json.dumps({"connected": True}), flush=True)
        agent = Agent(c, sleeps)
        await agent.play()
    print(json.dumps(agent.report))


if __name__ == "__main__":
    asyncio.run(main())
    sys.exit(0)
