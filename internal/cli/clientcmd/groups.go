package clientcmd

import (
	"fmt"
	"strings"
)

// Group is a command whose subcommands are calls to a running server.
type Group struct {
	Name, Summary string
	About         string // what its subcommands are about, for its help: "its crawls"
	Examples      string // its help's examples, lines of "  trawl ..."
	Commands      []Command
}

// Command is one subcommand of a Group.
type Command struct {
	Name, Args, Summary string
	Help                string // its help's text after the summary: more words, and examples
	NArgs               int    // arguments wanted; -1: any number
	// Run is the subcommand; nil for one with flags of its own (beside
	// Options), whose Run the command line makes from them.
	Run Run
}

// TokenHelp says where the clients find the token; every client's help
// ends with it.
const TokenHelp = `
The token (changes need it; reads do not) is the first of: --token-file or
TRAWL_TOKEN_FILE; TRAWL_TOKEN; token-file in the config file; DATA/api.token
with DATA from --data, TRAWL_DATA or the config file; ./trawl-data/api.token
if --server is on loopback (where trawl serve writes it when run there
without a token).`

// Help is the group's help.
func (g *Group) Help() string {
	var b strings.Builder
	fmt.Fprintf(&b, "usage: trawl %s COMMAND [flags] [args]\n\nTalks to a running trawl serve (--server) about %s.\n\nCommands:\n", g.Name, g.About)
	example := "" // a subcommand whose own section is worth showing
	width := 8
	for _, sc := range g.Commands {
		width = max(width, len(sc.Name))
	}
	for _, sc := range g.Commands {
		fmt.Fprintf(&b, "  %-*s %s\n", width, sc.Name, sc.Summary)
		if example == "" && sc.Run == nil {
			example = sc.Name
		}
	}
	if example == "" {
		example = g.Commands[0].Name
	}
	fmt.Fprintf(&b, `
Run 'trawl %[1]s COMMAND --help' for its flags. A config file section
%[1]q holds defaults for all of them (e.g. "server"), "%[1]s %[2]s"
for one.

Examples:
%[3]s
`, g.Name, example, strings.TrimRight(g.Examples, "\n"))
	return b.String()
}

// Usage is the subcommand's help, before its flags; path is its name
// with its group's.
func (sc Command) Usage(path string) string {
	return fmt.Sprintf("usage: trawl %s [flags] %s\n\n%s.\n%s\n%s\n%s", path, sc.Args,
		strings.ToUpper(sc.Summary[:1])+sc.Summary[1:], sc.Help, TokenHelp, `
Exit status: 0 done, 1 the server refused or could not be reached, 2 a
usage error.`)
}

// CrawlsGroup is `trawl crawls`; its subcommands are in the order its help
// lists them.
var CrawlsGroup = Group{Name: "crawls", About: "its crawls",
	Summary: "list, show, create, steer (seeds, exclusions), pause, resume and cancel a running server's crawls",
	Examples: `  trawl crawls list
  trawl crawls create --seed https://example.org/ --max-pages 1000
  trawl crawls stats 1
  trawl crawls exclude 1 --add '/calendar/'
  trawl crawls pause 1 && trawl crawls resume 1`,
	Commands: []Command{
		{Name: "list", Summary: "every crawl the server knows", NArgs: 0, Run: CrawlsList, Help: `
Examples:
  trawl crawls list
  trawl crawls list --json | jq '.crawls[] | select(.state == "running") | .id'`},
		{Name: "show", Args: "ID", Summary: "one crawl's spec and state", NArgs: 1, Run: CrawlsShow, Help: `
Examples:
  trawl crawls show 3
  trawl crawls show 3 --json`},
		{Name: "create", Args: "[SEED...]", Summary: "start a crawl", NArgs: -1, Help: `
From the --seed URLs and any given as arguments; prints the crawl's id. The
spec's defaults are trawl crawl's: the seeds' hosts, depth 20, no page limit,
priority 0.

Examples:
  trawl crawls create --seed https://example.org/
  trawl crawls create --name docs --seed https://example.org/docs/ --domain example.org --max-depth 5 --max-pages 10000
  trawl crawls create --priority 1 https://a.example/ https://b.example/
  trawl crawls create --continuous --recrawl-min 6h --recrawl-budget 500 https://example.org/
  trawl crawls create --data /srv/trawl --seed https://example.org/   # the token from /srv/trawl/api.token`},
		{Name: "stats", Args: "ID", Summary: "a crawl's counters", NArgs: 1, Run: CrawlsStats, Help: `
Examples:
  trawl crawls stats 3
  watch -n 5 trawl crawls stats 3
  trawl crawls stats 3 --json | jq .fetched`},
		{Name: "seeds", Args: "ID URL...", Summary: "add seeds to a crawl that has not ended", NArgs: -1, Run: CrawlsSeeds, Help: `
The seeds go through the crawl's scope and exclusions; those the crawl has
seen already are not queued again. Prints how many were added.

Examples:
  trawl crawls seeds 3 https://example.org/new/ https://example.org/archive/
  xargs trawl crawls seeds 3 < more-seeds.txt`},
		{Name: "exclude", Args: "ID", Summary: "show or edit a crawl's exclusion patterns", NArgs: 1, Help: `
Patterns are regular expressions (Go's RE2 syntax) matched anywhere in a
canonical URL unless anchored. A URL one matches is not fetched: links are
dropped as they are found, queued URLs as they are leased. Without --add or
--remove, prints the patterns; with them, changes them (the token is needed)
and prints the patterns after the change, one a line.

Examples:
  trawl crawls exclude 3
  trawl crawls exclude 3 --add '/calendar/' --add '\?sessionid='
  trawl crawls exclude 3 --remove '/calendar/'`},
		{Name: "pause", Args: "ID", Summary: "pause a crawl (its queued URLs wait; fetches in flight finish)", NArgs: 1, Run: Pause, Help: `
Examples:
  trawl crawls pause 3
  TRAWL_TOKEN_FILE=/etc/trawl/token trawl crawls pause 3 --server http://crawler:8420`},
		{Name: "resume", Args: "ID", Summary: "resume a paused crawl", NArgs: 1, Run: Resume, Help: `
Examples:
  trawl crawls resume 3`},
		{Name: "cancel", Args: "ID", Summary: "end a crawl for good (its queued URLs are dropped)", NArgs: 1, Run: Cancel, Help: `
Examples:
  trawl crawls cancel 3`},
	}}

// HostsGroup is `trawl hosts`: the hosts a server's frontier knows, and
// their policies.
var HostsGroup = Group{Name: "hosts", About: "the hosts its frontier knows",
	Summary: "list and show a running server's hosts; set a host's policy (its gap, parallelism, pause)",
	Examples: `  trawl hosts list --state backoff
  trawl hosts show example.org
  trawl hosts policy example.org --min-delay 5s`,
	Commands: []Command{
		{Name: "list", Summary: "the hosts, by state and crawl", NArgs: 0, Help: `
A page of hosts (--limit, the server's 100 by default), or every page with
--all. A host's state is one of dead, paused, parked (its IP's cap),
backoff, waiting (its gap), ready or idle. A dead host's state says why
it was given up (host-dropped, budget, duplicates, failing); a live host
whose latest fetches ended without a response says how many in a row and
how (timeout, network); 20 in a row the same way give it up. NEXT FETCH
is how long until the host may be fetched again and why it waits: its
politeness gap, backoff after errors, a server's Retry-After (on a page or
on robots.txt), robots.txt unavailable; DELAY is the gap its last request
set, and the rule that set it.

Examples:
  trawl hosts list
  trawl hosts list --state backoff --crawl 3
  trawl hosts list --all --json | jq -r '.hosts[] | select(.queued > 100) | .host'`},
		{Name: "show", Args: "HOST", Summary: "one host's queue per crawl, politeness clock, policy and robots.txt", NArgs: 1, Run: HostsShow, Help: `
Examples:
  trawl hosts show example.org
  trawl hosts show example.org:8080 --json`},
		{Name: "policy", Args: "HOST", Summary: "set a host's policy, replacing the one it had", NArgs: 1, Help: `
The policy given replaces the host's whole policy: a flag not given is the
node's default again, whatever it was set to before. --clear restores every
default. It takes effect at the host's next lease and survives a restart;
robots.txt's Crawl-delay, the adaptive delay and backoff still apply on top
of --min-delay, and the per-IP cap on top of --max-parallel.

Examples:
  trawl hosts policy example.org --min-delay 5s
  trawl hosts policy example.org --min-delay 2s --max-parallel 1 --paused
  trawl hosts policy example.org --clear`},
	}}

// NodeGroup is `trawl node`: the state of a server's node as a whole.
var NodeGroup = Group{Name: "node", About: "its node as a whole",
	Summary: "show, pause and resume a running server's whole node",
	Examples: `  trawl node show
  trawl node pause && trawl node resume`,
	Commands: []Command{
		{Name: "show", Summary: "whether the node is paused", NArgs: 0, Run: Node, Help: `
Examples:
  trawl node show
  trawl node show --json`},
		{Name: "pause", Summary: "stop fetching for every crawl (fetches in flight finish); survives a restart", NArgs: 0, Run: PauseNode, Help: `
Each crawl keeps its own state: one paused before stays paused after
trawl node resume.

Examples:
  trawl node pause
  TRAWL_TOKEN_FILE=/etc/trawl/token trawl node pause --server http://crawler:8420`},
		{Name: "resume", Summary: "fetch again after trawl node pause", NArgs: 0, Run: ResumeNode, Help: `
Examples:
  trawl node resume`},
	}}

// FleetGroup is `trawl fleet`: the fleet a server is a member of.
var FleetGroup = Group{Name: "fleet", About: "the fleet it is a member of",
	Summary: "show a fleet's members and which member serves each partition; remove a member gone for good",
	Examples: `  trawl fleet members --server http://crawler-1:8420
  trawl fleet partitions 17 200
  trawl fleet remove crawler-2`,
	Commands: []Command{
		{Name: "members", Summary: "the live members: each one's API, partitions and state", NArgs: 0, Run: FleetMembers, Help: `
The members as the answering member last saw them (its heartbeat's view):
the one answering is marked with *. A member gone for more than the
fleet's member TTL is not listed.

Examples:
  trawl fleet members
  trawl fleet members --json`},
		{Name: "partitions", Args: "[PARTITION...]", Summary: "the member each partition is given to (all, or those named)", NArgs: -1, Run: FleetPartitions, Help: `
A host's partition is the one its crawl log lines and trawl hosts show. A
partition given to no live member (its owner lost, not yet taken over)
shows "-".

Examples:
  trawl fleet partitions
  trawl fleet partitions 17 200`},
		{Name: "remove", Args: "NAME", Summary: "remove a member gone for good from the fleet's JetStream peers", NArgs: 1, Run: FleetRemove, Help: `
A member that will not come back (its machine lost, its data directory
gone) stays a peer of the fleet's embedded JetStream cluster: its share of
every stream's replicas is missing and it counts in every majority, so
one more loss stops the fleet. trawl fleet members lists such peers.
Removing one lets JetStream count without it. A member still live (or
stopped less than a member TTL ago) is refused. A member that is removed
and then started again joins as a new peer. For a fleet on an outside NATS
server (--nats), remove the peer there instead (nats server raft
peer-remove NAME).

Examples:
  trawl fleet members
  trawl fleet remove crawler-2`},
	}}
