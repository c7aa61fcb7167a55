# frozen_string_literal: true

module Chaos
  # A network of the run's own between the partitioned workers and the
  # database: two network namespaces joined by a veth pair, loopback-range
  # addresses only (127.0.2.2 for the workers, 127.0.2.1 for the relay), and
  # no loopback device up in either, so the link is the only path. The relay
  # (chaos/relay.rb), in the second namespace, forwards each connection to the
  # cluster's Unix socket. Cutting the link (`ip link set down`) cuts every
  # connection of the workers inside while they run on; `tc ... tbf` slows it.
  class Network
    WORKER_ADDRESS = "127.0.2.2"
    RELAY_ADDRESS = "127.0.2.1"
    RELAY_PORT = 5432

    attr_reader :worker_namespace

    def initialize(settings, log: nil)
      tag = "lmc#{settings.pg_port}"
      @worker_namespace = "#{tag}w"
      @relay_namespace = "#{tag}r"
      @worker_link = "#{tag}a"
      @relay_link = "#{tag}b"
      @log = log
      @relay = nil
    end

    # Whether this process may create network namespaces; a clear message
    # when not (the chaos run on PostgreSQL needs them).
    def self.check!
      raise "chaos: network namespaces need root (uid #{Process.uid}); run as root" unless Process.uid.zero?
      return if system("ip", "netns", "list", out: File::NULL, err: File::NULL)

      raise "chaos: `ip netns` is not available (iproute2)"
    end

    def create
      self.class.check!
      teardown
      run!("ip", "netns", "add", @worker_namespace)
      run!("ip", "netns", "add", @relay_namespace)
      run!("ip", "link", "add", @worker_link, "type", "veth", "peer", "name", @relay_link)
      run!("ip", "link", "set", @worker_link, "netns", @worker_namespace)
      run!("ip", "link", "set", @relay_link, "netns", @relay_namespace)
      address(@worker_namespace, @worker_link, WORKER_ADDRESS)
      address(@relay_namespace, @relay_link, RELAY_ADDRESS)
      self
    end

    # Starts the relay inside its namespace, forwarding to `socket`.
    def start_relay(socket, log_path)
      relay = File.expand_path("relay.rb", __dir__)
      @relay = Process.spawn("ip", "netns", "exec", @relay_namespace, RbConfig.ruby, relay, RELAY_ADDRESS,
                             RELAY_PORT.to_s, socket, out: log_path, err: log_path)
      wait_for_relay
      @relay
    end

    # The command prefix that runs a program inside the workers' namespace.
    def exec_prefix
      ["ip", "netns", "exec", @worker_namespace]
    end

    def cut
      run!("ip", "netns", "exec", @worker_namespace, "ip", "link", "set", @worker_link, "down")
    end

    def heal
      run!("ip", "netns", "exec", @worker_namespace, "ip", "link", "set", @worker_link, "up")
    end

    # A slow link: a token bucket of `kbit` kbit/s on the workers' side.
    def slow(kbit)
      run!("ip", "netns", "exec", @worker_namespace, "tc", "qdisc", "replace", "dev", @worker_link, "root", "tbf",
           "rate", "#{kbit}kbit", "burst", "1600", "latency", "2s")
    end

    def unslow
      system("ip", "netns", "exec", @worker_namespace, "tc", "qdisc", "del", "dev", @worker_link, "root",
             out: File::NULL, err: File::NULL)
    end

    # Removes both namespaces (the veth pair goes with them) and stops the
    # relay; safe to call when nothing exists.
    def teardown
      if @relay
        begin
          Process.kill(:KILL, @relay)
          Process.wait(@relay)
        rescue Errno::ESRCH, Errno::ECHILD
          nil
        end
        @relay = nil
      end
      [@worker_namespace, @relay_namespace].each do |namespace|
        system("ip", "netns", "del", namespace, out: File::NULL, err: File::NULL)
      end
    end

    def exists?
      IO.popen(%w[ip netns list], &:read).split("\n").any? { |line| line.split.first == @worker_namespace }
    end

    private

    def address(namespace, link, ip)
      inside = ["ip", "netns", "exec", namespace]
      run!(*inside, "sysctl", "-qw", "net.ipv4.conf.all.route_localnet=1", "net.ipv4.conf.#{link}.route_localnet=1")
      run!(*inside, "ip", "addr", "add", "#{ip}/24", "dev", link)
      run!(*inside, "ip", "link", "set", link, "up")
    end

    def wait_for_relay
      deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + 10
      until system("ip", "netns", "exec", @worker_namespace, RbConfig.ruby, "-rsocket", "-e",
                   "TCPSocket.new('#{RELAY_ADDRESS}', #{RELAY_PORT}).close", out: File::NULL, err: File::NULL)
        raise "chaos: the relay did not start (see its log)" if Process.clock_gettime(Process::CLOCK_MONOTONIC) > deadline

        sleep 0.1
      end
    end

    def run!(*command)
      return if system(*command, out: File::NULL, err: File::NULL)

      raise "chaos: `#{command.join(' ')}` failed"
    end
  end
end
