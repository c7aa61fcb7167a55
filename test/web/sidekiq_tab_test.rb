# frozen_string_literal: true

require_relative "web_helper"
require_relative "../jobs/sidekiq_cluster"
require_relative "../support/quiet_sidekiq"
require "lease_machines/web/sidekiq_tab"
require "securerandom"

module LeaseMachines
  # The UI as a tab of the real Sidekiq::Web, registered through the running
  # Sidekiq's own extension API (6.4 on the host, 7.3 and 8.1 in the matrix's
  # trixie and sid roots), requested through Rack with a cookie jar, against
  # a real Redis (Sidekiq's layout reads its stats).
  class WebSidekiqTabTest < Minitest::Test
    include WebTestHelper

    # The host's session: Rack::Session::Cookie where Rack has it (Rack 2),
    # else (Rack 3 without the rack-session gem in the bundle) sessions kept
    # in memory behind a random cookie.
    class MemorySession
      def initialize(app)
        @app = app
        @sessions = {}
      end

      def call(env)
        id = env["HTTP_COOKIE"].to_s[/test_session=(\h+)/, 1] || SecureRandom.hex(16)
        env["rack.session"] = (@sessions[id] ||= {})
        status, headers, body = @app.call(env)
        [status, headers.merge("set-cookie" => "test_session=#{id}; Path=/"), body]
      end
    end

    SESSION = begin
      require "rack/session/cookie"
      [Rack::Session::Cookie, { secret: SecureRandom.hex(64), same_site: true }]
    rescue LoadError
      [MemorySession, nil]
    end

    def setup
      super
      SidekiqRedis.use(SidekiqCluster.redis_url)
      QuietSidekiq.logger!
      @lease = @store.authority("reports/nightly").acquire(owner: 7, ttl: 60).lease
      @store.authority(%(<script>document.title="pwned"</script>)).acquire(owner: 8, ttl: 60)
      Web::SidekiqTab.register(Web.new(store: @store), tab: "Leases")
      @jar = {}
    end

    def teardown
      Web::SidekiqTab.register(Web.new(store: Stores::Memory.new))
      super
    end

    def test_the_tab_is_in_sidekiqs_navigation_and_lists_the_leases
      dashboard = get("/sidekiq/")
      assert_equal 200, dashboard.status
      assert_match(%r{<a[^>]* href="/sidekiq/leases"[^>]*>\s*Leases\s*</a>}m, dashboard.body)

      index = get("/sidekiq/leases")
      assert_equal 200, index.status
      assert_match(%r{text/html}, index.headers["content-type"])
      assert_equal ["&lt;script&gt;document.title=&quot;pwned&quot;&lt;/script&gt;", "reports/nightly"],
                   cells(index.body, "lm-name")
      refute_includes index.body, "<script>document.title"
      assert_includes index.body, %(href="/sidekiq/leases/resource?name=reports%2Fnightly")
      assert_includes index.body, ::Sidekiq::NAME.to_s, "inside Sidekiq's own layout"
      assert_equal %w[reports/nightly], cells(get("/sidekiq/leases?match=reports%2F*").body, "lm-name")
    end

    def test_a_release_through_the_tab_uses_sidekiqs_csrf_protection
      page = get("/sidekiq/leases/resource?name=reports%2Fnightly")
      assert_equal 200, page.status
      assert_includes page.body, %(href="/sidekiq/leases/release?name=reports%2Fnightly")
      confirm = get("/sidekiq/leases/release?name=reports%2Fnightly")
      assert_includes confirm.body, %(action="/sidekiq/leases/release")

      forged = post("/sidekiq/leases/release", { "name" => "reports/nightly", "token" => @lease.token.to_s }, forged: true)
      assert_equal 403, forged.status, "Sidekiq refuses a POST without its CSRF proof"
      assert @store.status("reports/nightly").held?

      released = post("/sidekiq/leases/release", form(confirm.body, "reports/nightly"))
      assert_equal 303, released.status, released.body
      assert_equal "/sidekiq/leases/resource?name=reports%2Fnightly&released=1", released.headers["location"]
      assert_nil @store.status("reports/nightly").lease
      assert_includes @log.string, %(force-released from the web UI by "192.0.2.9")
    end

    def test_read_only_and_missing_resources_inside_the_tab
      confirm = get("/sidekiq/leases/release?name=reports%2Fnightly") # Sidekiq's token, while it was writable
      Web::SidekiqTab.register(Web.new(store: @store, read_only: true))
      page = get("/sidekiq/leases/resource?name=reports%2Fnightly")
      refute_includes page.body, "Force release"
      assert_equal 403, get("/sidekiq/leases/release?name=reports%2Fnightly").status
      refused = post("/sidekiq/leases/release", form(confirm.body, "reports/nightly"))
      assert_equal 403, refused.status
      assert_includes refused.body, "This UI is read-only"
      assert @store.status("reports/nightly").held?

      missing = get("/sidekiq/leases/resource?name=nope")
      assert_equal 404, missing.status
      assert_includes missing.body, "No resource named &quot;nope&quot; in this store."
    end

    private

    def app
      @app ||= begin
        session, options = SESSION
        Rack::Lint.new(Rack::Builder.new do
          options ? use(session, **options) : use(session)
          map("/sidekiq") { run ::Sidekiq::Web.new }
        end.to_app)
      end
    end

    def get(path)
      call("GET", path, {})
    end

    # A POST as the browser sends it from the page (same origin), or forged
    # from another site: no Sidekiq token (6, 7), Sec-Fetch-Site cross-site (8).
    def post(path, params, forged: false)
      call("POST", path, { params: params, "HTTP_SEC_FETCH_SITE" => forged ? "cross-site" : "same-origin" })
    end

    def call(method, path, env)
      cookie = @jar.map { |name, value| "#{name}=#{value}" }.join("; ")
      env = env.merge("HTTP_COOKIE" => cookie, "REMOTE_ADDR" => "192.0.2.9")
      response = Rack::MockRequest.new(app).request(method, path, env)
      Array(response.headers["set-cookie"]).flat_map { |line| line.split("\n") }.each do |line|
        name, value = line[/\A[^;]+/].split("=", 2)
        @jar[name] = value
      end
      response
    end

    # The confirmation form's fields, with Sidekiq's CSRF field where it has one.
    def form(body, name, token = body[/name="token" value="(\d+)"/, 1])
      fields = { "name" => name, "token" => token.to_s }
      sidekiq_token = body[/name=.authenticity_token. value=.([^'"]+)/, 1]
      sidekiq_token ? fields.merge("authenticity_token" => sidekiq_token) : fields
    end
  end
end
