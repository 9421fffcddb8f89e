/*
 * msc_cfg_opts.c - the command line's options: names, kinds, defaults,
 * help texts and groups (the reference's, plus the deployment ones).
 */
#include "msc_cfg_int.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

#define F(x) offsetof(struct msc_cfg, x)
#define CORE "core options"
#define DESC "tool description"
#define DOCK "docker backend options"
#define FLY "fly backend options"
#define E2B "e2b backend options"
#define MODAL "modal backend options"
#define WASM "wasm backend options"
#define DEPL "deployment options (split services)"

/* Who takes an option (enum msc_prog). */
#define EDGE MSC_PROG_EDGE
#define DOCKER MSC_PROG_DOCKER_DRIVER
#define DRV MSC_PROG_DRIVERS

const struct opt msc_cfg_opts[] = {
	{ "help", OPT_HELP, 0, 0, NULL, NULL, NULL, NULL,
	    "show this help message and exit",
	    MSC_PROG_ALL },
	{ "version", OPT_VERSION, 0, 0, NULL, NULL, NULL, NULL,
	    "show the version and exit",
	    MSC_PROG_ALL },
	{ "backend", OPT_STR, F(backend), 0, "docker", "BACKEND",
	    "docker,e2b,fly,go_busybox,modal,wasm", CORE,
	    "Backend to use (default: docker)",
	    DRV },
	{ "transport", OPT_STR, F(transport), 0, "stdio", "TRANSPORT",
	    "stdio,http", CORE, "MCP transport (default: stdio)",
	    EDGE },
	{ "host", OPT_STR, F(host), 0, "127.0.0.1", "HOST", NULL, CORE,
	    "HTTP bind address (default: 127.0.0.1, HTTP mode only)",
	    EDGE },
	{ "port", OPT_LONG, F(port), 0, "8435", "PORT", NULL, CORE,
	    "HTTP listen port (default: 8435, HTTP mode only)",
	    EDGE },
	{ "timeout", OPT_LONG, F(timeout), 0, "120", "TIMEOUT", NULL, CORE,
	    "Default exec timeout in seconds (default: 120)",
	    MSC_PROG_SESSION | DRV },
	{ "output-limit", OPT_LONG, F(output_limit), 0, "2097152",
	    "OUTPUT_LIMIT", NULL, CORE,
	    "Max combined stdout+stderr bytes per exec (default: 2097152 = 2 MiB)",
	    MSC_PROG_SESSION | MSC_PROG_WASM_DRIVER },
	{ "reply-output-limit", OPT_LONG, F(reply_output_limit), 0, "8192",
	    "BYTES", NULL, CORE,
	    "Most stdout+stderr bytes one reply carries: longer output comes as "
	    "its head and tail, and is saved whole in the computer at a path "
	    "the reply names; 0: the whole output, up to --output-limit, as "
	    "the reference (default: 8192)",
	    MSC_PROG_SESSION },
	{ "session-timeout", OPT_LONG, F(session_timeout), 0, "300",
	    "SESSION_TIMEOUT", NULL, CORE,
	    "Idle session timeout in seconds (default: 300, HTTP mode only)",
	    EDGE | MSC_PROG_SESSION },
	{ "max-session-computers", OPT_LONG, F(max_session_computers), 0,
	    "16", "N", NULL, CORE,
	    "Computers one session may hold at once (default: 16)",
	    MSC_PROG_SESSION },
	{ "max-sandboxes", OPT_LONG, F(max_sandboxes), 0, "1024", "N",
	    NULL, CORE,
	    "Live sandbox handles (MCP 2026-07-28) the server holds at once "
	    "(default: 1024)",
	    MSC_PROG_SESSION },
	{ "max-session-commands", OPT_LONG, F(max_session_commands), 0, "16",
	    "N", NULL, CORE,
	    "Commands one session may have in flight at once; more are "
	    "refused (default: 16)",
	    MSC_PROG_SESSION },
	{ "max-session-tasks", OPT_LONG, F(max_session_tasks), 0, "64", "N",
	    NULL, CORE,
	    "MCP tasks one session may hold at once, working or kept; past "
	    "it a call is answered without a task (default: 64)",
	    MSC_PROG_SESSION },
	{ "task-ttl", OPT_LONG, F(task_ttl), 0, "3600", "SECONDS", NULL, CORE,
	    "How long an MCP task's result is kept past its command's timeout "
	    "(default: 3600)",
	    MSC_PROG_SESSION },
	{ "max-pending-calls", OPT_LONG, F(max_pending_calls), 0, "4096",
	    "N", NULL, CORE,
	    "Tool calls the session service has in flight at once, all "
	    "sessions together; more are refused (default: 4096)",
	    MSC_PROG_SESSION },
	{ "max-principal-sessions", OPT_LONG, F(max_principal_sessions), 0,
	    "25000", "N", NULL, CORE,
	    "Sessions and handles one principal of --tokens-file may hold; "
	    "past it its least recently used unused session is ended, else "
	    "refused (default: 25000; 0: no share)",
	    MSC_PROG_SESSION },
	{ "max-principal-sandboxes", OPT_LONG, F(max_principal_sandboxes), 0,
	    "256", "N", NULL, CORE,
	    "Live sandbox handles one principal of --tokens-file may hold "
	    "(default: 256; 0: no share)",
	    MSC_PROG_SESSION },
	{ "max-principal-calls", OPT_LONG, F(max_principal_calls), 0, "1024",
	    "N", NULL, CORE,
	    "Tool calls one principal of --tokens-file may have in flight, all "
	    "its sessions together (default: 1024; 0: no share)",
	    MSC_PROG_SESSION },
	{ "max-principal-tasks", OPT_LONG, F(max_principal_tasks), 0, "1024",
	    "N", NULL, CORE,
	    "MCP tasks one principal of --tokens-file may hold, working or "
	    "kept (default: 1024; 0: no share)",
	    MSC_PROG_SESSION },
	{ "auth-token", OPT_SECRET, F(auth_token), 0, NULL, "AUTH_TOKEN", NULL,
	    CORE, "Bearer token for /mcp (default: KILNTAINERS_AUTH_TOKEN)",
	    EDGE },
	{ "auth-token-file", OPT_SECRET_FILE, F(auth_token), 0, NULL, "FILE",
	    NULL, CORE, "Read the bearer token from the first line of FILE",
	    EDGE },
	{ "tokens-file", OPT_STR, F(tokens_file), 0, NULL, "PATH", NULL, CORE,
	    "Principals for /mcp: one 'NAME TOKEN' per line, '#' comments; "
	    "re-read on SIGHUP (default: KILNTAINERS_TOKENS_FILE)",
	    EDGE },
	{ "allow-unauthenticated-http", OPT_TRUE,
	    F(allow_unauthenticated_http), 0, NULL, NULL, NULL, CORE,
	    "Explicitly allow a non-loopback listener without built-in auth",
	    EDGE },
	{ "allowed-host", OPT_LIST, F(allowed_hosts), F(n_allowed_hosts), NULL,
	    "NAME[:PORT]", NULL, CORE,
	    "Host header to accept on /mcp besides the loopback names (default: KILNTAINERS_ALLOWED_HOSTS). Repeatable.",
	    EDGE },
	{ "allowed-origin", OPT_LIST, F(allowed_origins), F(n_allowed_origins),
	    NULL, "ORIGIN", NULL, CORE,
	    "Origin to accept on /mcp besides loopback ones, e.g. https://app.example (default: KILNTAINERS_ALLOWED_ORIGINS). Repeatable.",
	    EDGE },
	{ "max-address-connections", OPT_LONG, F(max_address_connections), 0,
	    "256", "N", NULL, CORE,
	    "HTTP connections one client address (an IPv6 one by its /64) may "
	    "hold at once; past it its oldest idle one is closed, else the new "
	    "one is refused (default: 256, or "
	    "KILNTAINERS_MAX_ADDRESS_CONNECTIONS)",
	    EDGE },
	{ "trusted-proxy", OPT_LIST, F(trusted_proxies), F(n_trusted_proxies),
	    NULL, "ADDR[,ADDR...]", NULL, CORE,
	    "Reverse proxy (an address or ADDR/PREFIX) whose X-Forwarded-For "
	    "or Forwarded header names the client; from anyone else those "
	    "headers are ignored (default: KILNTAINERS_TRUSTED_PROXIES). "
	    "Repeatable.",
	    EDGE },
	{ "shell", OPT_STR, F(shell), 0, "/bin/bash", "SHELL", NULL, CORE,
	    "Shell binary for command mode (e.g., /bin/bash, ash). Default: /bin/bash.",
	    DRV },
	{ "network", OPT_NEG, F(network), 0, "1", NULL, NULL, CORE,
	    "Enable network access in sandboxes (default: enabled); --no-network disables it",
	    EDGE | DRV },
	{ "network-allow", OPT_LIST, F(net_allow), F(n_net_allow), NULL,
	    "DOMAIN[,DOMAIN...]", NULL, CORE,
	    "Allowlist mode by default: computers reach only these domains "
	    "(wildcards such as *.pypi.example), over HTTP and HTTPS through "
	    "the server's proxy. Repeatable.",
	    DRV },
	{ "network-deny", OPT_LIST, F(net_deny), F(n_net_deny), NULL,
	    "DOMAIN[,DOMAIN...]", NULL, CORE,
	    "Domains refused even when --network-allow covers them. "
	    "Repeatable.",
	    DRV },
	{ "proxy-dns-server", OPT_STR, F(proxy_dns), 0, NULL, "ADDRESS", NULL,
	    DOCK, "DNS server the allowlist proxy resolves names with "
	    "(default: the host's /etc/resolv.conf)",
	    DRV },
	{ "proxy-credential", OPT_LIST, F(proxy_creds), F(n_proxy_creds), NULL,
	    "DOMAIN=HEADER:ENVVAR", NULL, DOCK,
	    "Allowlist mode: the proxy adds HEADER, its value read from the "
	    "server's environment variable ENVVAR, to plain HTTP requests for "
	    "DOMAIN; the value never enters a computer. Repeatable.",
	    DRV },
	{ "proxy-credential-file", OPT_STR, F(proxy_cred_file), 0, NULL,
	    "FILE", NULL, DOCK,
	    "Read --proxy-credential entries from FILE, one per line "
	    "(# starts a comment)",
	    DRV },
	{ "lease-timeout", OPT_LONG, F(lease_timeout), 0, "30", "SECONDS",
	    NULL, CORE, "A temporary computer whose server (or driver) is "
	    "gone ends by itself this long after the last renewal of its "
	    "lease (default: 30)",
	    DRV },
	{ "tools", OPT_STR, F(tools), 0, NULL, "GROUPS", NULL, DESC,
	    "Tool groups to offer, comma-separated: terminal (always on), "
	    "lifecycle (as ENABLE_LIFECYCLE_TOOLS=true), processes "
	    "(background processes), files (file_read, file_write, "
	    "file_edit, computer_upload, computer_download), snapshots (snapshots, rollback and forks), ports "
	    "(preview URLs: computer_expose_port, computer_unexpose_port) "
	    "(default: KILNTAINERS_TOOLS, else terminal)",
	    EDGE },
	{ "workspace", OPT_STR, F(workspace), 0, NULL, "DIR", NULL, DESC,
	    "A local folder computer_upload and computer_download (--tools "
	    "files) may read and write, besides the client's MCP roots; over "
	    "HTTP the only one (default: KILNTAINERS_WORKSPACE, else none)",
	    EDGE },
	{ "max-background-processes", OPT_LONG, F(max_background_processes),
	    0, "16", "N", NULL, DESC,
	    "Background processes (--tools processes) one computer runs at "
	    "once; more are refused (default: 16)",
	    EDGE },
	{ "process-log-limit", OPT_LONG, F(process_log_limit), 0, "1048576",
	    "BYTES", NULL, DESC,
	    "Output a background process keeps in its computer, the newest "
	    "bytes (default: 1048576)",
	    EDGE },
	{ "max-snapshots", OPT_LONG, F(max_snapshots), 0, "50", "N", NULL,
	    CORE, "Snapshots (--tools snapshots) a driver keeps at once; "
	    "more are refused until some are deleted (default: "
	    "KILNTAINERS_MAX_SNAPSHOTS, else 50)",
	    DRV },
	{ "max-principal-snapshots", OPT_LONG, F(max_principal_snapshots), 0,
	    "25", "N", NULL, CORE, "Snapshots one principal of --tokens-file "
	    "may keep in a driver, of --max-snapshots (default: "
	    "KILNTAINERS_MAX_PRINCIPAL_SNAPSHOTS, else 25; 0: no share)",
	    DRV },
	{ "share-snapshots", OPT_TRUE, F(share_snapshots), 0, NULL, NULL,
	    NULL, CORE, "Every principal may list, restore and fork every "
	    "snapshot (default: KILNTAINERS_SHARE_SNAPSHOTS; else a snapshot "
	    "is its maker's alone; deleting stays the maker's)",
	    DRV },
	{ "preview-domain", OPT_STR, F(preview_domain), 0, "localhost",
	    "DOMAIN", NULL, DOCK, "Preview URLs (--tools ports) are "
	    "http://CAPABILITY.DOMAIN:PORT/; name a wildcard domain that "
	    "reaches --preview-listen (default: localhost, which browsers "
	    "send to loopback)",
	    DOCKER },
	{ "preview-listen", OPT_STR, F(preview_listen), 0, "127.0.0.1:8790",
	    "HOST:PORT", NULL, DOCK, "Where the preview listener binds, "
	    "started at the first exposed port (default: 127.0.0.1:8790; "
	    "port 0 picks a free one)",
	    DOCKER },
	{ "tool-instruction-override", OPT_STR, F(tool_instruction_override),
	    0, NULL, "TOOL_INSTRUCTION_OVERRIDE", NULL, DESC,
	    "Replace the entire terminal_execute tool description",
	    EDGE },
	{ "extended-tool-instruction", OPT_STR, F(extended_tool_instruction),
	    0, NULL, "EXTENDED_TOOL_INSTRUCTION", NULL, DESC,
	    "Append to the backend's default tool description",
	    EDGE },
	{ "engine", OPT_STR, F(engine), 0, "docker", "ENGINE", NULL, DOCK,
	    "Container engine API flavour (default: docker). Supports podman.",
	    DOCKER },
	{ "docker-host", OPT_STR, F(docker_host), 0, NULL, "DOCKER_HOST", NULL,
	    DOCK, "Engine address: unix:///path or tcp://host:port (default: DOCKER_HOST, else the local socket)",
	    DOCKER },
	{ "runtime", OPT_STR, F(runtime), 0, NULL, "NAME", NULL, DOCK,
	    "OCI runtime the engine runs computers with, e.g. runsc (gVisor); "
	    "the engine must know it, checked at start (default: "
	    "KILNTAINERS_RUNTIME, else the engine's default runtime)",
	    DOCKER },
	{ "image", OPT_STR, F(image), 0, "debian:bookworm-slim", "IMAGE", NULL,
	    DOCK, "Docker image (default: debian:bookworm-slim)",
	    DOCKER | MSC_PROG_CLOUD_DRIVER },
	{ "warm-pool", OPT_LONG, F(warm_pool), 0, "-1", "N", NULL, DOCK,
	    "Started containers kept ready for new temporary computers "
	    "(default: 2; 0 turns the pool off)",
	    DOCKER },
	{ "warm-pool-max", OPT_LONG, F(warm_pool_max), 0, "32", "N", NULL,
	    DOCK, "What the warm pool grows to while new computers find it "
	    "empty, shrinking back to --warm-pool when they stop (default: 32)",
	    DOCKER },
	{ "warm-pool-shrink-after", OPT_LONG, F(warm_pool_shrink_after), 0,
	    "30", "SECONDS", NULL, DOCK,
	    "Seconds without a miss, with the pool full, before a grown warm "
	    "pool takes one off toward --warm-pool (default: 30)",
	    DOCKER },
	{ "cpu", OPT_STR, F(cpu), 0, NULL, "CPU", NULL, DOCK,
	    "Docker CPU limit (e.g., \"1.5\")",
	    DOCKER },
	{ "memory", OPT_STR, F(memory), 0, NULL, "MEMORY", NULL, DOCK,
	    "Docker memory limit (e.g., \"512m\")",
	    DOCKER },
	{ "disk-quota", OPT_STR, F(disk_quota), 0, "1G", "SIZE", NULL, CORE,
	    "Most bytes one computer may store, e.g. 500M, 1G or 1GiB; 0: no "
	    "bound. go_busybox and wasm count them; Docker and Podman use the "
	    "storage driver's size option where the engine has one, and "
	    "computer_list says when it has none "
	    "(default: KILNTAINERS_DISK_QUOTA, else 1G)",
	    DOCKER | MSC_PROG_WASM_DRIVER },
	{ "docker-run-flag", OPT_LIST, F(run_flags), F(n_run_flags), NULL,
	    "DOCKER_RUN_FLAGS", NULL, DOCK,
	    "Additional docker run flag, mapped onto the Engine API. Repeatable. (e.g., --docker-run-flag \"--pids-limit=256\")",
	    DOCKER },
	{ "fly-cli", OPT_STR, F(fly_cli), 0, "fly", "FLY_CLI", NULL, FLY,
	    "flyctl/fly executable (default: fly)",
	    MSC_PROG_FLY_DRIVER },
	{ "fly-app", OPT_STR, F(fly_app), 0, NULL, "FLY_APP", NULL, FLY,
	    "Fly App that owns sandbox Machines (default: FLY_APP_NAME)",
	    MSC_PROG_FLY_DRIVER },
	{ "fly-token", OPT_SECRET, F(fly_token), 0, NULL, "FLY_TOKEN", NULL, FLY,
	    "Fly API token (default: FLY_API_TOKEN or FLY_TOKEN)",
	    MSC_PROG_FLY_DRIVER },
	{ "fly-token-file", OPT_SECRET_FILE, F(fly_token), 0, NULL, "FILE",
	    NULL, FLY, "Read the Fly API token from the first line of FILE",
	    MSC_PROG_FLY_DRIVER },
	{ "fly-image", OPT_STR, F(fly_image), 0, "debian:bookworm-slim",
	    "FLY_IMAGE", NULL, FLY, "Base OCI image for sandbox Machines",
	    MSC_PROG_FLY_DRIVER },
	{ "fly-region", OPT_STR, F(fly_region), 0, NULL, "FLY_REGION", NULL,
	    FLY, "Region for newly created Machines",
	    MSC_PROG_FLY_DRIVER },
	{ "fly-cpu-kind", OPT_STR, F(fly_cpu_kind), 0, "shared", "KIND",
	    "shared,performance", FLY, "Fly CPU kind (default: shared)",
	    MSC_PROG_FLY_DRIVER },
	{ "fly-cpus", OPT_STR, F(fly_cpus), 0, "1", "FLY_CPUS", NULL, FLY,
	    "CPUs per Machine (default: 1)",
	    MSC_PROG_FLY_DRIVER },
	{ "fly-memory", OPT_STR, F(fly_memory), 0, "512", "FLY_MEMORY", NULL,
	    FLY, "Memory per Machine in MB (default: 512)",
	    MSC_PROG_FLY_DRIVER },
	{ "fly-rootfs-size", OPT_STR, F(fly_rootfs_size), 0, NULL,
	    "FLY_ROOTFS_SIZE", NULL, FLY, "Optional root filesystem size in GB",
	    MSC_PROG_FLY_DRIVER },
	{ "fly-org", OPT_STR, F(fly_org), 0, NULL, "FLY_ORG", NULL, FLY,
	    "Organization for the auto-created app (default: FLY_ORG, else personal)",
	    MSC_PROG_FLY_DRIVER },
	{ "fly-api-url", OPT_STR, F(fly_api_url), 0, NULL, "URL", NULL, FLY,
	    "Fly Machines API base URL (default: FLY_API_HOSTNAME, else the public Machines API)",
	    MSC_PROG_FLY_DRIVER },
	{ "e2b-api-key", OPT_SECRET, F(e2b_api_key), 0, NULL, "E2B_API_KEY",
	    NULL, E2B, "E2B API key (overrides E2B_API_KEY environment variable)",
	    MSC_PROG_CLOUD_DRIVER },
	{ "e2b-api-key-file", OPT_SECRET_FILE, F(e2b_api_key), 0, NULL, "FILE",
	    NULL, E2B, "Read the E2B API key from the first line of FILE",
	    MSC_PROG_CLOUD_DRIVER },
	{ "e2b-template", OPT_STR, F(e2b_template), 0, "base", "E2B_TEMPLATE",
	    NULL, E2B, "E2B template name or ID (default: base)",
	    MSC_PROG_CLOUD_DRIVER },
	{ "e2b-sandbox-timeout", OPT_STR, F(e2b_sandbox_timeout), 0, "3600",
	    "E2B_SANDBOX_TIMEOUT", NULL, E2B,
	    "Sandbox lifetime timeout in seconds (default: 3600)",
	    MSC_PROG_CLOUD_DRIVER },
	{ "e2b-metadata", OPT_LIST, F(e2b_metadata), F(n_e2b_metadata), NULL,
	    "E2B_METADATA", NULL, E2B,
	    "Metadata key=value pairs (can be used multiple times)",
	    MSC_PROG_CLOUD_DRIVER },
	{ "e2b-env", OPT_LIST, F(e2b_env), F(n_e2b_env), NULL, "E2B_ENV", NULL,
	    E2B, "Environment variable key=value pairs (can be used multiple times)",
	    MSC_PROG_CLOUD_DRIVER },
	{ "modal-token-id", OPT_STR, F(modal_token_id), 0, NULL,
	    "MODAL_TOKEN_ID", NULL, MODAL,
	    "Modal token ID (overrides environment/default auth)",
	    MSC_PROG_CLOUD_DRIVER },
	{ "modal-token-secret", OPT_SECRET, F(modal_token_secret), 0, NULL,
	    "MODAL_TOKEN_SECRET", NULL, MODAL,
	    "Modal token secret (overrides environment/default auth)",
	    MSC_PROG_CLOUD_DRIVER },
	{ "modal-token-secret-file", OPT_SECRET_FILE, F(modal_token_secret), 0,
	    NULL, "FILE", NULL, MODAL,
	    "Read the Modal token secret from the first line of FILE",
	    MSC_PROG_CLOUD_DRIVER },
	{ "modal-app-name", OPT_STR, F(modal_app_name), 0, "kilntainers",
	    "MODAL_APP_NAME", NULL, MODAL, "Modal app name",
	    MSC_PROG_CLOUD_DRIVER },
	{ "modal-cpu", OPT_STR, F(modal_cpu), 0, "1.0", "MODAL_CPU", NULL,
	    MODAL, "CPU cores (fractional, default: 1.0)",
	    MSC_PROG_CLOUD_DRIVER },
	{ "modal-memory", OPT_STR, F(modal_memory), 0, "512", "MODAL_MEMORY",
	    NULL, MODAL, "Memory in MiB (default: 512)",
	    MSC_PROG_CLOUD_DRIVER },
	{ "modal-ports", OPT_STR, F(modal_ports), 0, NULL, "PORTS", NULL,
	    MODAL, "Ports each new sandbox opens as encrypted tunnels, "
	    "comma-separated (at most 16), which computer_expose_port "
	    "(--tools ports) answers with; Modal opens tunnels only at "
	    "creation (default: none)",
	    MSC_PROG_CLOUD_DRIVER },
	{ "gpu", OPT_STR, F(gpu), 0, NULL, "GPU", NULL, MODAL,
	    "GPU type (e.g., \"A10G\", \"H100\")",
	    MSC_PROG_CLOUD_DRIVER },
	{ "region", OPT_STR, F(region), 0, NULL, "REGION", NULL, MODAL,
	    "Geographic region (e.g., \"us-east\")",
	    MSC_PROG_CLOUD_DRIVER },
	{ "sandbox-timeout", OPT_STR, F(sandbox_timeout), 0, "3600",
	    "SANDBOX_TIMEOUT", NULL, MODAL,
	    "Sandbox lifetime timeout in seconds (default: 3600, max 86400)",
	    MSC_PROG_CLOUD_DRIVER },
	{ "wasm-path", OPT_STR, F(wasm_path), 0, NULL, "WASM_PATH", NULL, WASM,
	    "Path to the .wasm file to execute (required for wasm backend)",
	    MSC_PROG_WASM_DRIVER },
	{ "wasm-max-memory", OPT_STR, F(wasm_max_memory), 0, "256",
	    "WASM_MAX_MEMORY", NULL, WASM, "Max WASM memory in MiB (default: 256)",
	    MSC_PROG_WASM_DRIVER },
	{ "wasm-fuel", OPT_STR, F(wasm_fuel), 0, NULL, "WASM_FUEL", NULL, WASM,
	    "WASM instruction fuel limit (default: unlimited)",
	    MSC_PROG_WASM_DRIVER },
	{ "session-url", OPT_STR, F(session_url), 0, NULL, "URL", NULL, DEPL,
	    "Address of the session service (default: in this process)",
	    EDGE },
	{ "inventory-url", OPT_STR, F(inventory_url), 0, NULL, "URL", NULL,
	    DEPL, "Address of the inventory service (default: in this process)",
	    MSC_PROG_SESSION },
	{ "driver-url", OPT_LIST, F(driver_urls), F(n_driver_urls), NULL,
	    "[ID=]URL", NULL, DEPL,
	    "Address of a driver service; repeat for several engine hosts "
	    "(default: one driver in this process)",
	    MSC_PROG_SESSION | MSC_PROG_INVENTORY },
	{ "cluster", OPT_STR, F(cluster), 0, NULL, "FILE", NULL, DEPL,
	    "Cluster configuration: 'option = value' lines (session-url, "
	    "inventory-url, driver-url, tls-ca, tls-cert, ...); flags override",
	    MSC_PROG_ALL },
	{ "tls-ca", OPT_STR, F(tls_ca), 0, NULL, "FILE", NULL, DEPL,
	    "The cluster CA (PEM) that every tls+tcp:// peer must be signed by",
	    MSC_PROG_ALL },
	{ "tls-cert", OPT_STR, F(tls_cert), 0, NULL, "FILE", NULL, DEPL,
	    "This service's certificate and private key (one PEM file)",
	    MSC_PROG_ALL },
	{ "allow-plain-tcp", OPT_TRUE, F(allow_plain_tcp), 0, NULL, NULL, NULL,
	    DEPL, "Allow tcp:// without TLS, loopback included: no "
	    "authentication, any peer may call anything (trusted networks "
	    "only)",
	    MSC_PROG_ALL },
	{ "listen", OPT_STR, F(listen), 0, NULL, "URL", NULL, DEPL,
	    "Address a service listens on (service programs only)",
	    MSC_PROG_SERVICES },
	{ "driver-id", OPT_STR, F(driver_id), 0, "docker-1", "ID", NULL, DEPL,
	    "Identity of this driver instance (default: docker-1)",
	    DRV },
	{ "driver-workers", OPT_LONG, F(driver_workers), 0, "64", "N", NULL,
	    DEPL, "Engine calls a driver runs at once (default: 64)",
	    DRV },
	{ "driver-creations", OPT_LONG, F(driver_creations), 0, "8", "N",
	    NULL, DEPL, "Computers a docker driver creates at once; the rest "
	    "wait their turn (default: 8)",
	    DOCKER },
	{ "driver-owner-workers", OPT_LONG, F(driver_owner_workers), 0, "0",
	    "N", NULL, DEPL, "Commands of one session a driver runs at once; "
	    "the rest wait their turn (default: 0 = a quarter of "
	    "--driver-workers, at least 1)",
	    DRV },
};
const size_t msc_cfg_nopts = sizeof(msc_cfg_opts) / sizeof(*msc_cfg_opts);

static const char *const groups[] = { CORE, DESC, DOCK, FLY, E2B, MODAL,
	WASM, DEPL };


/* Each program's name and what it is, for its usage and --help. */
static const struct {
	unsigned prog;
	const char *name;
	const char *what;
} programs[] = {
	{ MSC_PROG_EDGE, "msc-edge", "The MCP edge (stdio or Streamable HTTP) in "
	    "front of a session service at --session-url." },
	{ MSC_PROG_SESSION, "msc-session", "The session service: sessions, "
	    "their computers and commands, over the inventory and drivers." },
	{ MSC_PROG_INVENTORY, "msc-inventory", "The inventory service: which "
	    "driver holds which computer, who owns it, placement." },
	{ MSC_PROG_DOCKER_DRIVER, "msc-docker-driver", "The driver of one "
	    "Docker or Podman engine." },
	{ MSC_PROG_FLY_DRIVER, "msc-fly-driver", "The driver of Fly "
	    "Machines." },
	{ MSC_PROG_CLOUD_DRIVER, "msc-cloud-driver", "The driver of E2B or "
	    "Modal sandboxes (--backend e2b or modal)." },
	{ MSC_PROG_WASM_DRIVER, "msc-wasm-driver", "The driver of WebAssembly "
	    "computers (--backend wasm or go_busybox)." },
};

#define NPROGRAMS (sizeof(programs) / sizeof(*programs))

static const char *
program_name(unsigned prog)
{
	for (size_t i = 0; i < NPROGRAMS; i++)
		if (programs[i].prog == prog)
			return programs[i].name;
	return "mcp-sandbox-computer";
}

int
msc_cfg_prog_by_name(const char *name, unsigned *progp)
{
	for (size_t i = 0; i < NPROGRAMS; i++)
		if (strcmp(programs[i].name, name) == 0) {
			*progp = programs[i].prog;
			return 0;
		}
	return -ENOENT;
}

void
msc_cfg_owners(const struct opt *o, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < NPROGRAMS && used < len; i++) {
		if ((o->progs & programs[i].prog) == 0)
			continue;
		used += (size_t)snprintf(buf + used, len - used, "%s, ",
		    programs[i].name);
	}
	if (used < len)
		snprintf(buf + used, len - used, "mcp-sandbox-computer");
}

void
msc_cfg_usage(FILE *f, unsigned prog)
{
	if (prog != MSC_PROG_ALL) {
		fprintf(f, "usage: %s [-h] [--version] [OPTION...]\n",
		    program_name(prog));
		return;
	}
	fputs("usage: " PROG " [-h] [--version] [--backend {docker,e2b,fly,"
	      "go_busybox,modal,wasm}] [--transport {stdio,http}] [...]\n",
	    f);
}

static void
help_option(const struct opt *o)
{
	char lhs[128];

	if (o->kind == OPT_NEG)
		snprintf(lhs, sizeof(lhs), "--%s, --no-%s", o->name, o->name);
	else if (o->choices != NULL)
		snprintf(lhs, sizeof(lhs), "--%s {%s}", o->name, o->choices);
	else if (o->metavar != NULL)
		snprintf(lhs, sizeof(lhs), "--%s %s", o->name, o->metavar);
	else
		snprintf(lhs, sizeof(lhs), "--%s", o->name);
	if (strlen(lhs) < 22)
		printf("  %-22s%s\n", lhs, o->help);
	else
		printf("  %s\n                        %s\n", lhs, o->help);
}

void
msc_cfg_help(unsigned prog)
{
	const char *what = "MCP server providing isolated Linux sandboxes for "
			   "LLM agent shell execution.";

	for (size_t i = 0; i < NPROGRAMS; i++)
		if (programs[i].prog == prog)
			what = programs[i].what;
	msc_cfg_usage(stdout, prog);
	printf("\n%s\n\noptions:\n  -h, --help            show this help "
	       "message and exit\n  --version             show the version "
	       "and exit\n", what);
	for (size_t g = 0; g < sizeof(groups) / sizeof(*groups); g++) {
		bool header = false;

		for (size_t i = 0; i < msc_cfg_nopts; i++) {
			const struct opt *o = &msc_cfg_opts[i];

			if (o->group != groups[g] || (o->progs & prog) == 0)
				continue;
			if (!header)
				printf("\n%s:\n", groups[g]);
			header = true;
			help_option(o);
		}
	}
}
