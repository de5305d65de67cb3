/**
 * Fixed SBPL sections. They hold only operation names, service names and fixed system paths; every path
 * that comes from a request is passed as a `-D` parameter by the profile renderer instead.
 */

/** What any program needs to start and run under `(deny default)`, whatever the policy. */
export const SEATBELT_BASE_POLICY = `; processes: children inherit this sandbox, and may only signal or inspect each other
(allow process-exec)
(allow process-fork)
(allow signal (target same-sandbox))
(allow process-info* (target same-sandbox))
; /bin/ps is setuid and cannot start inside a sandbox; \`brew shellenv\` and prompt scripts call it
(allow process-exec (literal "/bin/ps") (with no-sandbox))

; devices every shell redirects to or reads from
(allow file-read* file-write-data file-ioctl
  (require-all (literal "/dev/null") (vnode-type CHARACTER-DEVICE)))
(allow file-read* (literal "/dev/zero") (literal "/dev/random") (literal "/dev/urandom"))
(allow file-write-data file-ioctl (literal "/dev/dtracehelper"))

; CPU, memory and OS facts that runtimes (Node, Python, the JVM, Go) query at start-up
(allow sysctl-read
  (sysctl-name "hw.activecpu")
  (sysctl-name "hw.byteorder")
  (sysctl-name "hw.cacheconfig")
  (sysctl-name "hw.cachelinesize_compat")
  (sysctl-name "hw.cpufamily")
  (sysctl-name "hw.cpufrequency")
  (sysctl-name "hw.cpufrequency_compat")
  (sysctl-name "hw.cputype")
  (sysctl-name "hw.l1dcachesize_compat")
  (sysctl-name "hw.l1icachesize_compat")
  (sysctl-name "hw.l2cachesize_compat")
  (sysctl-name "hw.l3cachesize_compat")
  (sysctl-name "hw.logicalcpu")
  (sysctl-name "hw.logicalcpu_max")
  (sysctl-name "hw.machine")
  (sysctl-name "hw.memsize")
  (sysctl-name "hw.model")
  (sysctl-name "hw.ncpu")
  (sysctl-name "hw.nperflevels")
  (sysctl-name "hw.packages")
  (sysctl-name "hw.pagesize")
  (sysctl-name "hw.pagesize_compat")
  (sysctl-name "hw.physicalcpu")
  (sysctl-name "hw.physicalcpu_max")
  (sysctl-name "hw.tbfrequency_compat")
  (sysctl-name "hw.vectorunit")
  (sysctl-name-prefix "hw.optional.")
  (sysctl-name-prefix "hw.perflevel")
  (sysctl-name "kern.argmax")
  (sysctl-name "kern.hostname")
  (sysctl-name "kern.maxfilesperproc")
  (sysctl-name "kern.maxproc")
  (sysctl-name "kern.osproductversion")
  (sysctl-name "kern.osrelease")
  (sysctl-name "kern.ostype")
  (sysctl-name "kern.osvariant_status")
  (sysctl-name "kern.osversion")
  (sysctl-name "kern.secure_kernel")
  (sysctl-name "kern.usrstack64")
  (sysctl-name "kern.version")
  (sysctl-name "kern.proc.all")
  (sysctl-name-prefix "kern.proc.pgrp.")
  (sysctl-name-prefix "kern.proc.pid.")
  (sysctl-name "machdep.cpu.brand_string")
  (sysctl-name "sysctl.proc_cputype")
  (sysctl-name "vm.loadavg")
  (sysctl-name-prefix "net.routetable."))
; the JVM asks for this through a sysctl write although it only reads
(allow sysctl-write (sysctl-name "kern.grade_cputype"))

; user and group lookups (getpwuid), power assertions, read-only user preferences
(allow mach-lookup
  (global-name "com.apple.system.opendirectoryd.libinfo")
  (global-name "com.apple.PowerManagement.control")
  (global-name "com.apple.cfprefsd.daemon")
  (global-name "com.apple.cfprefsd.agent")
  (local-name "com.apple.cfprefsd.agent")
  (global-name "com.apple.system.logger")
  (global-name "com.apple.logd"))
(allow user-preference-read)
(allow ipc-posix-shm-read* (ipc-posix-name-prefix "apple.cfprefs."))

; Python multiprocessing locks; OpenMP runtimes (PyTorch) register themselves in shared memory
(allow ipc-posix-sem)
(allow ipc-posix-shm-read-data ipc-posix-shm-write-create ipc-posix-shm-write-data ipc-posix-shm-write-unlink
  (ipc-posix-name-regex #"^/__KMP_REGISTERED_LIB_[0-9]+$"))
(allow iokit-open (iokit-registry-entry-class "RootDomainUserClient"))
; kernel control sockets used to read system information; not network access
(allow system-socket (require-all (socket-domain AF_SYSTEM) (socket-protocol 2)))`;

/**
 * Terminal access, only when the command gets a PTY. A PTY ux opened before the sandbox lacks the
 * sandbox's PTY extension, so ioctl (how a shell notices it has a terminal) is allowed on any tty, while
 * opening one by path is limited to the ones created inside: this sandbox cannot type into other terminals.
 */
export const SEATBELT_PTY_POLICY = `(allow pseudo-tty)
(allow file-read* file-write* file-ioctl (literal "/dev/ptmx"))
(allow file-read* file-write* file-ioctl (literal "/dev/tty"))
(allow file-read* file-write*
  (require-all (regex #"^/dev/ttys[0-9]+$") (extension "com.apple.sandbox.pty")))
(allow file-ioctl (regex #"^/dev/ttys[0-9]+$"))`;

/**
 * Network on: IP sockets to and from any address, name resolution and TLS verification. Not every
 * socket: unix sockets stay closed except mDNSResponder's (getaddrinfo asks it) and the ones the policy
 * lists, which the renderer adds after this section, so the network on does not open the Docker socket
 * or an ssh-agent. `(allow system-socket)` lets sockets of any domain be created (routing and AF_UNIX
 * sockets included); what they may connect to is decided by the `network-*` rules.
 */
export const SEATBELT_NETWORK_POLICY = `; IP (v4 and v6) to and from any address; not every network operation, which would open every unix socket
(allow network-outbound (remote ip "*:*"))
(allow network-inbound (local ip "*:*"))
(allow network-bind (local ip "*:*"))
; getaddrinfo() asks mDNSResponder on this socket
(allow network-outbound (remote unix-socket (path-literal "/private/var/run/mDNSResponder")))
(allow system-socket)
; DNS configuration, proxy settings, TLS trust evaluation
(allow mach-lookup
  (global-name "com.apple.SystemConfiguration.DNSConfiguration")
  (global-name "com.apple.SystemConfiguration.configd")
  (global-name "com.apple.dnssd.service")
  (global-name "com.apple.networkd")
  (global-name "com.apple.trustd.agent")
  (global-name "com.apple.ocspd")
  (global-name "com.apple.SecurityServer")
  (global-name "com.apple.bsd.dirhelper")
  (global-name "com.apple.system.opendirectoryd.membership"))`;

/**
 * What a program needs to load and run when reads are restricted and the policy grants `minimal`: the
 * system's libraries, frameworks, tools and configuration, and the common package prefixes.
 */
export const SEATBELT_PLATFORM_DEFAULTS_POLICY = `(allow file-read*
  (subpath "/usr/lib")
  (subpath "/usr/libexec")
  (subpath "/usr/share")
  (subpath "/usr/bin")
  (subpath "/usr/sbin")
  (subpath "/bin")
  (subpath "/sbin")
  (subpath "/System/Library")
  (subpath "/System/Cryptexes")
  (subpath "/System/Volumes/Preboot/Cryptexes")
  (subpath "/Library/Apple")
  (subpath "/Library/Developer/CommandLineTools")
  (subpath "/private/etc")
  (subpath "/private/var/db/timezone")
  (subpath "/private/var/db/dyld")
  (subpath "/opt/homebrew")
  (subpath "/usr/local")
  (subpath "/dev/fd")
  (literal "/etc")
  (literal "/tmp")
  (literal "/var"))
(allow file-map-executable
  (subpath "/usr/lib")
  (subpath "/usr/libexec")
  (subpath "/System/Library")
  (subpath "/System/Cryptexes")
  (subpath "/System/Volumes/Preboot/Cryptexes")
  (subpath "/Library/Apple")
  (subpath "/Library/Developer/CommandLineTools")
  (subpath "/opt/homebrew")
  (subpath "/usr/local"))`;
