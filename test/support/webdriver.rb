# frozen_string_literal: true

require "json"
require "net/http"
require "socket"
require_relative "free_port"
require "tmpdir"
require "fileutils"
require "timeout"

module LeaseMachines
  # Headless Chromium driven through chromedriver's W3C WebDriver protocol
  # (plain JSON over loopback HTTP: no driver gem). One browser per test
  # class: {.start}, then {#quit}. Chromium runs with a fresh profile and the
  # switches that keep it off the network (the machine's network is closed).
  #
  # With LEASE_MACHINES_WEBDRIVER_URL (http://127.0.0.1:PORT) the chromedriver
  # listening there is used instead of one started here: script/matrix
  # starts the host's for the tests in a chroot, which holds no Chromium but
  # shares the host's loopback, so the host's browser loads the chroot's pages.
  class WebDriver
    CHROMIUM = ENV.fetch("CHROMIUM", "/usr/bin/chromium")
    CHROMEDRIVER = ENV.fetch("CHROMEDRIVER", "/usr/bin/chromedriver")
    REMOTE = ENV.fetch("LEASE_MACHINES_WEBDRIVER_URL", nil)
    SWITCHES = %w[--headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking
                  --disable-component-update --disable-sync --disable-dev-shm-usage --window-size=1280,900].freeze
    ELEMENT = "element-6066-11e4-a52e-4f735466cecf"

    # A command the browser refused (no such element, a script error).
    class Failure < StandardError; end

    # Whether Chromium and chromedriver are installed (bin/setup installs
    # them), or another's chromedriver is given (REMOTE).
    def self.available?
      !REMOTE.nil? || (File.executable?(CHROMIUM) && File.executable?(CHROMEDRIVER))
    end

    def self.start
      new.tap(&:start)
    end

    def start
      @driver = REMOTE ? URI(REMOTE) : spawn_driver
      Timeout.timeout(10) { sleep 0.05 until ready? }
      # A remote chromedriver gives Chromium a fresh profile of its own.
      profile = @profile ? ["--user-data-dir=#{File.join(@profile, 'profile')}"] : []
      options = { binary: CHROMIUM, args: SWITCHES + profile }
      @session = command(:post, "/session", capabilities: { alwaysMatch: { browserName: "chrome",
                                                                           "goog:chromeOptions": options } })
                 .fetch("sessionId")
      self
    end

    def quit
      command(:delete, "/session/#{@session}") if @session
    ensure
      if @pid
        Process.kill("TERM", @pid)
        Process.wait(@pid)
      end
      FileUtils.rm_rf(@profile) if @profile
    end

    def visit(url) = session(:post, "/url", url: url)

    def current_url = session(:get, "/url")

    # Waits up to 5 s for the element (a click may have started a
    # navigation that has not ended yet).
    # @return [String] the element's id, for {#text}, {#click}, {#type}
    def find(css)
      deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + 5
      begin
        session(:post, "/element", using: "css selector", value: css).fetch(ELEMENT)
      rescue Failure => e
        raise unless e.message.include?("no such element") && Process.clock_gettime(Process::CLOCK_MONOTONIC) < deadline

        sleep 0.05
        retry
      end
    end

    def all(css)
      session(:post, "/elements", using: "css selector", value: css).map { |element| element.fetch(ELEMENT) }
    end

    def texts(css) = all(css).map { |element| text(element) }

    def text(element) = session(:get, "/element/#{element}/text")

    # Clicks a link or a button that loads another page, and waits (up to
    # 5 s) until the new page has loaded: the old one is marked first.
    def click(css)
      element = find(css)
      script("window.__lm_old_page = true; return true")
      session(:post, "/element/#{element}/click", {})
      deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + 5
      until script("return window.__lm_old_page === undefined && document.readyState === 'complete'")
        if Process.clock_gettime(Process::CLOCK_MONOTONIC) > deadline
          raise Failure,
                "clicking #{css} loaded no new page within 5 s"
        end

        sleep 0.05
      end
    end

    def type(css, text)
      element = find(css)
      session(:post, "/element/#{element}/clear", {})
      session(:post, "/element/#{element}/value", text: text)
    end

    # Runs `script` in the page (a function body: `return ...`).
    def script(script, *args) = session(:post, "/execute/sync", script: script, args: args)

    # Saves the page as a PNG.
    def screenshot(path)
      File.binwrite(path, session(:get, "/screenshot").unpack1("m"))
    end

    private

    # Starts this machine's chromedriver, with a folder for Chromium's profile.
    # @return [URI] where it listens
    def spawn_driver
      @profile = Dir.mktmpdir("lease_machines_chromium")
      port = FreePort.pick
      log = File.join(@profile, "chromedriver.log")
      @pid = Process.spawn(CHROMEDRIVER, "--port=#{port}", "--log-path=#{log}", out: File::NULL, err: File::NULL)
      URI("http://127.0.0.1:#{port}")
    end

    def ready?
      Net::HTTP.get_response(URI.join(@driver, "/status")).is_a?(Net::HTTPSuccess)
    rescue SystemCallError
      false
    end

    def session(method, path, body = nil) = command(method, "/session/#{@session}#{path}", body)

    def command(method, path, body = nil)
      http = Net::HTTP.new(@driver.host, @driver.port)
      http.read_timeout = 30
      request = { get: Net::HTTP::Get, post: Net::HTTP::Post, delete: Net::HTTP::Delete }.fetch(method).new(path)
      request.body = JSON.generate(body) unless body.nil?
      request["content-type"] = "application/json"
      reply = JSON.parse(http.request(request).body)
      value = reply["value"]
      raise Failure, "#{method.upcase} #{path}: #{value['error']}: #{value['message']}" if value.is_a?(Hash) && value["error"]

      value
    end
  end
end
