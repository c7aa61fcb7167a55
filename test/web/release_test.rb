# frozen_string_literal: true

require_relative "web_helper"

module LeaseMachines
  # Force release from the UI: the confirmation, the CSRF check, the event
  # and the log line naming who, read-only mode; on a real SQLite store.
  class WebReleaseTest < Minitest::Test
    include WebTestHelper

    def setup
      super
      @lease = @store.authority("reports/nightly").acquire(owner: 7, ttl: 60).lease
      @events = []
      @subscriber = LeaseMachines.subscribe { |name, payload| @events << [name, payload] }
    end

    def teardown
      LeaseMachines.unsubscribe(@subscriber)
      super
    end

    def test_the_page_links_to_a_confirmation_whose_form_releases
      app = mounted(Web.new(store: @store, who: ->(env) { "ops:#{env['HTTP_X_OPERATOR']}" }))
      page = request(app, "GET", "/resource?name=reports%2Fnightly").body
      assert_includes page, %(href="/leases/release?name=reports%2Fnightly">Force release&hellip;</a>)
      confirm = request(app, "GET", "/release?name=reports%2Fnightly")
      assert_match(%r{Force release <code>reports/nightly</code>\?}, confirm.body)
      assert_includes confirm.body, %(<form class="lm-confirm" method="post" action="/leases/release">)
      assert @store.status("reports/nightly").held?, "a confirmation page releases nothing"

      response = release(app, "reports/nightly")
      assert_equal 303, response.status
      assert_equal "/leases/resource?name=reports%2Fnightly&released=1", response.headers["location"]
      status = @store.status("reports/nightly")
      assert_nil status.lease
      assert_equal @lease.token, status.last_issued, "the mark stays: the old holder is fenced"
      after = request(app, "GET", response.headers["location"].delete_prefix(MOUNT)).body
      assert_includes after, "Released. The next grant gets a token greater than #{@lease.token}."
      assert_equal ["free"], after.scan(%r{<td class="lm-state">(.*?)</td>}).flatten
      refute_includes after, "Force release&hellip;", "nothing left to release"
    end

    def test_a_release_tells_an_event_and_a_log_line_naming_who
      app = mounted(Web.new(store: @store, who: ->(env) { "ops:#{env['HTTP_X_OPERATOR']}" }))
      confirm = request(app, "GET", "/release?name=reports%2Fnightly")
      response = request(app, "POST", "/release", env: { "HTTP_X_OPERATOR" => "ada" },
                                                  params: { "name" => "reports/nightly", "token" => @lease.token.to_s,
                                                            Web::CSRF::FIELD => csrf_field(confirm.body) })
      assert_equal 303, response.status

      name, payload = @events.find { |event| event.first == :force_released }
      refute_nil name, "a force_released event"
      assert_equal({ resource: "reports/nightly", owner: 7, token: @lease.token, status: :released, reason: :forced,
                     by: "ops:ada" }, payload.except(:duration))
      assert_kind_of Float, payload[:duration]
      line = %(WARN -- : lease_machines: "reports/nightly" force-released from the web UI by "ops:ada": )
      assert_includes @log.string, "#{line}cleared the lease of owner 7 (token #{@lease.token})"
    end

    def test_who_defaults_to_the_authenticated_user_else_the_address
      app = mounted(Web.new(store: @store))
      release(app, "reports/nightly", env: { "REMOTE_ADDR" => "192.0.2.7" })
      assert_includes @log.string, %(by "192.0.2.7")
      @store.authority("other").acquire(owner: 1, ttl: 60)
      confirm = request(app, "GET", "/release?name=other")
      form = { "name" => "other", "token" => "1", Web::CSRF::FIELD => csrf_field(confirm.body) }
      request(app, "POST", "/release", env: { "REMOTE_USER" => "grace", "REMOTE_ADDR" => "192.0.2.7" }, params: form)
      assert_includes @log.string, %(by "grace")
    end

    def test_a_post_without_the_csrf_field_or_its_cookie_is_refused
      app = mounted(Web.new(store: @store))
      confirm = request(app, "GET", "/release?name=reports%2Fnightly")
      field = csrf_field(confirm.body)
      form = { "name" => "reports/nightly", "token" => @lease.token.to_s }

      refused = [
        request(app, "POST", "/release", params: form),
        request(app, "POST", "/release", params: form.merge(Web::CSRF::FIELD => "0" * 64)),
        request(app, "POST", "/release", params: form.merge(Web::CSRF::FIELD => field), env: { "HTTP_COOKIE" => "" }),
        request(app, "POST", "/release", params: form.merge(Web::CSRF::FIELD => field),
                                         env: { "HTTP_COOKIE" => "#{Web::CSRF::COOKIE}=#{'A' * 43}" })
      ]
      refused.each do |response|
        assert_equal 403, response.status
        assert_includes response.body, "The form&#39;s CSRF token does not match its cookie: nothing was released."
      end
      assert @store.status("reports/nightly").held?
      assert_empty(@events.select { |event| event.first == :force_released })
    end

    def test_a_field_made_under_another_secret_is_refused
      secret = "s" * 32
      other = mounted(Web.new(store: @store, secret: "t" * 32))
      field = csrf_field(request(other, "GET", "/release?name=reports%2Fnightly").body)
      app = mounted(Web.new(store: @store, secret: secret))
      response = request(app, "POST", "/release", params: { "name" => "reports/nightly", "token" => @lease.token.to_s,
                                                            Web::CSRF::FIELD => field })
      assert_equal 403, response.status, "the cookie is the browser's, the field another app's"
      assert_equal 303, release(mounted(Web.new(store: @store, secret: secret)), "reports/nightly").status,
                   "two apps with one secret accept each other's forms (several processes)"
    end

    def test_the_cookie_is_http_only_same_site_and_for_the_mount
      response = request(mounted(Web.new(store: @store)), "GET", "/", env: { "HTTPS" => "on" })
      assert_match(%r{\Alease_machines_csrf=[A-Za-z0-9_-]{43}; Path=/leases; HttpOnly; SameSite=Lax; Secure\z},
                   response.headers["set-cookie"])
      assert_nil request(mounted(Web.new(store: @store)), "GET", "/").headers["set-cookie"], "kept while valid"
    end

    def test_a_lease_that_changed_since_the_confirmation_is_not_released
      app = mounted(Web.new(store: @store))
      confirm = request(app, "GET", "/release?name=reports%2Fnightly")
      @store.force_release("reports/nightly")
      newer = @store.authority("reports/nightly").acquire(owner: 8, ttl: 60).lease
      response = request(app, "POST", "/release", params: { "name" => "reports/nightly", "token" => @lease.token.to_s,
                                                            Web::CSRF::FIELD => csrf_field(confirm.body) })
      assert_equal 409, response.status
      assert_includes response.body, "changed since you confirmed (token &quot;#{@lease.token}&quot;, now #{newer.token})"
      assert_equal newer, @store.status("reports/nightly").lease
    end

    def test_read_only_shows_no_release_and_refuses_the_post
      app = mounted(Web.new(store: @store, read_only: true))
      page = request(app, "GET", "/resource?name=reports%2Fnightly").body
      refute_includes page, "Force release"
      assert_includes request(app, "GET", "/").body, %(<span class="lm-mode">read-only</span>)
      assert_equal 403, request(app, "GET", "/release?name=reports%2Fnightly").status

      field = csrf_field(request(mounted(Web.new(store: @store)), "GET", "/release?name=reports%2Fnightly").body)
      response = request(app, "POST", "/release", params: { "name" => "reports/nightly", "token" => @lease.token.to_s,
                                                            Web::CSRF::FIELD => field })
      assert_equal 403, response.status
      assert_includes response.body, "This UI is read-only: nothing can be released from it."
      assert @store.status("reports/nightly").held?
    end

    def test_a_free_resource_has_nothing_to_confirm
      @store.force_release("reports/nightly")
      response = request(mounted(Web.new(store: @store)), "GET", "/release?name=reports%2Fnightly")
      assert_equal 200, response.status
      assert_includes response.body, "reports/nightly has no lease to release."
      refute_includes response.body, "<form"
    end
  end
end
