# frozen_string_literal: true

require_relative "web_helper"
require "ripper"

module LeaseMachines
  # The UI's pages on a real SQLite store, through Rack::MockRequest.
  class WebPagesTest < Minitest::Test
    include WebTestHelper

    def test_the_index_lists_every_resource_with_its_state_holder_and_token
      @store.authority("reports/nightly").acquire(owner: 7, ttl: 60)
      @store.authority("cleanup").acquire(owner: 3, now: Time.now.to_f - 40, ttl: 10)
      token = @store.authority("released").acquire(owner: 1, ttl: 9).lease.token
      @store.authority("released").release(owner: 1, token: token)

      response = request(mounted(Web.new(store: @store)), "GET", "/")
      assert_equal 200, response.status
      assert_equal "text/html; charset=utf-8", response.headers["content-type"]
      assert_match(/script-src|default-src 'none'/, response.headers["content-security-policy"])
      assert_equal %w[cleanup released reports/nightly], cells(response.body, "lm-name")
      assert_equal %w[expired free held], cells(response.body, "lm-state")
      assert_equal ["owner 3", "-", "owner 7"], cells(response.body, "lm-holder")
      assert_equal %w[1 - 1], cells(response.body, "lm-token")
      left = cells(response.body, "lm-left")
      assert_match(/\Aexpired 3\d\.\d s ago\z/, left[0])
      assert_equal "-", left[1]
      assert_includes 30.0..60.0, Float(left[2][/\A(\d+\.\d) s\z/, 1])
      assert_match(/\A\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC\z/, cells(response.body, "lm-changed").first)
      assert_includes response.body, %(href="/leases/resource?name=reports%2Fnightly")
    end

    def test_spans_of_time_in_words
      spans = [0, 119.94, 120, 7199, 7200, 172_799, 172_800, 1_764_700_000].map { |seconds| Web::HTML.span(seconds) }
      assert_equal ["0.0 s", "119.9 s", "2 min", "119 min", "2 h", "47 h", "2 d", "20424 d"], spans
    end

    def test_the_filter_takes_a_part_of_a_name_or_a_glob
      %w[reports/nightly reports/weekly billing/nightly].each { |name| @store.authority(name).acquire(owner: 1, ttl: 60) }
      app = mounted(Web.new(store: @store))

      assert_equal %w[billing/nightly reports/nightly], cells(request(app, "GET", "/?match=nightly").body, "lm-name")
      assert_equal %w[reports/nightly reports/weekly], cells(request(app, "GET", "/?match=reports%2F*").body, "lm-name")
      assert_equal %w[billing/nightly reports/weekly],
                   cells(request(app, "GET", "/?match=%7Bbilling%2F*%2C*weekly%7D").body, "lm-name")
      empty = request(app, "GET", "/?match=nothing*").body
      assert_empty cells(empty, "lm-name")
      assert_includes empty, "0 of 3 resources match <code>nothing*</code>"
    end

    def test_the_cli_and_the_ui_match_a_glob_alike
      pattern = NamePattern.new("reports/*")
      assert pattern.match?("reports/a/b:c")
      refute pattern.match?("billing/reports/a")
      assert NamePattern.glob?("a[bc]")
      refute NamePattern.glob?("reports/nightly")
      assert_error(ArgumentError, /glob must be valid UTF-8/) { NamePattern.new("\xFF".b) }
    end

    def test_the_list_is_paged
      names = Array.new(25) { |at| format("job/%02d", at) }
      names.each { |name| @store.authority(name).acquire(owner: 1, ttl: 60) }
      app = mounted(Web.new(store: @store, per_page: 10))

      first = request(app, "GET", "/").body
      assert_equal names.first(10), cells(first, "lm-name")
      assert_includes first, "page 1 of 3"
      assert_includes first, %(rel="next" href="/leases/?page=2")
      refute_includes first, %(rel="prev")
      last = request(app, "GET", "/?page=3").body
      assert_equal names.last(5), cells(last, "lm-name")
      assert_includes last, %(rel="prev" href="/leases/?page=2")
      assert_equal names.last(5), cells(request(app, "GET", "/?page=99").body, "lm-name"), "clamped to the last"
      assert_equal names.first(10), cells(request(app, "GET", "/?page=nonsense").body, "lm-name")
      filtered = request(app, "GET", "/?match=job%2F1*").body
      assert_equal names[10, 10], cells(filtered, "lm-name")
      refute_includes filtered, %(rel="next")
    end

    def test_unreadable_rows_are_named_and_the_others_listed
      %w[a_good b_bad].each { |name| @store.authority(name).acquire(owner: 7, ttl: 60) }
      db = SQLite3::Database.new(@path)
      db.execute("UPDATE lease_machines_resources SET updated_at = 'garbage' WHERE name = 'b_bad'")
      db.close

      body = request(mounted(Web.new(store: @store)), "GET", "/").body
      assert_equal %w[a_good], cells(body, "lm-name")
      assert_match(%r{1 rows of this page cannot be read:.*<code>b_bad</code>: .*unreadable updated_at}m, body)
    end

    def test_a_resource_page_shows_its_status_its_fence_mark_and_its_events
      fence = Fences::SQLite.new(@path).setup!
      seen_before = Web::RecentEvents.shared # subscribed from here on
      lease = @store.authority("reports/nightly").hold(owner: 7, ttl: 60, &:lease).value
      granted = @store.authority("reports/nightly").acquire(owner: 8, ttl: 60).lease
      fence.guard("reports/nightly", granted.token) { |_db| nil }
      app = mounted(Web.new(store: @store, fences: fence))

      body = request(app, "GET", "/resource?name=reports%2Fnightly").body
      assert_includes body, %(<h2 class="lm-title">reports/nightly</h2>)
      assert_equal ["held"], body.scan(%r{<td class="lm-state">(.*?)</td>}).flatten
      assert_includes body, "<td class=\"lm-token\">#{granted.token}</td>"
      assert_includes body, "Highest token a guarded write showed: <strong>#{granted.token}</strong>"
      assert_includes body, "since #{Web::HTML.time(seen_before.since)}"
      events = body[%r{<table class="lm-events.*?</table>}m]
      refute_nil events, "the hold's events are listed"
      assert_match(%r{<td>release</td><td>released</td><td></td><td>7</td><td>#{lease.token}</td>}, events)
      assert_match(%r{<td>acquire</td><td>granted</td><td></td><td>7</td><td>#{lease.token}</td>}, events)
      assert_operator events.index("<td>release</td>"), :<, events.index("<td>acquire</td>"), "newest first"
    ensure
      fence&.close
    end

    def test_without_fences_or_events_the_page_says_what_is_not_shown
      @store.authority("nightly").acquire(owner: 7, ttl: 60)
      body = request(mounted(Web.new(store: @store, events: false)), "GET", "/resource?name=nightly").body
      assert_includes body, "Not shown: this UI was given no fence (<code>fences:</code>)."
      assert_includes body, "Not shown: this UI keeps no events (<code>events: false</code>)."
    end

    def test_a_fence_without_a_row_and_a_fence_that_cannot_be_read
      @store.authority("nightly").acquire(owner: 7, ttl: 60)
      fence = Fences::SQLite.new(@path).setup!
      body = request(mounted(Web.new(store: @store, fences: fence)), "GET", "/resource?name=nightly").body
      assert_includes body, "No guarded write to <code>nightly</code> yet."
      fence.close
      other = Fences::SQLite.new(File.join(@dir, "no_table.sqlite3"))
      body = request(mounted(Web.new(store: @store, fences: other)), "GET", "/resource?name=nightly").body
      assert_match(/The fence could not be read: .*no such table/, body)
      other.close
    end

    def test_unknown_pages_resources_and_bad_names
      app = mounted(Web.new(store: @store))
      assert_equal 404, request(app, "GET", "/nope").status
      missing = request(app, "GET", "/resource?name=nope")
      assert_equal 404, missing.status
      assert_includes missing.body, "No resource named &quot;nope&quot; in this store."
      assert_equal 400, request(app, "GET", "/resource").status
      bad = request(app, "GET", "/resource?name=")
      assert_equal 400, bad.status
      assert_includes bad.body, "Bad resource name:"
      assert_equal 404, request(app, "DELETE", "/release").status
    end

    def test_a_store_that_cannot_be_read_is_a_503_page
      @store.authority("nightly").acquire(owner: 7, ttl: 60)
      File.write(File.join(@dir, "empty.sqlite3"), "")
      broken = Stores::SQLite.new(File.join(@dir, "empty.sqlite3"))
      response = request(mounted(Web.new(store: broken)), "GET", "/")
      assert_equal 503, response.status
      assert_match(/The lease store cannot be read: .*no such table/, response.body)
      broken.close
    end

    def test_the_configured_store_is_the_default_and_is_read_at_each_request
      app = mounted(Web.new)
      response = request(app, "GET", "/")
      assert_equal 503, response.status
      assert_includes response.body, "no lease store configured"

      @store.authority("nightly").acquire(owner: 7, ttl: 60)
      LeaseMachines.configure { |config| config.store = @store }
      assert_equal %w[nightly], cells(request(app, "GET", "/").body, "lm-name")
      assert_equal %w[nightly], cells(request(mounted(Web), "GET", "/").body, "lm-name"), "mount LeaseMachines::Web"
    end

    def test_head_has_no_body
      response = request(mounted(Web.new(store: @store)), "HEAD", "/")
      assert_equal [200, ""], [response.status, response.body]
    end

    # docs/OPERATIONS.md's examples mount the UI in Rails, config.ru and
    # Sidekiq Web, which this suite cannot run: each must at least parse.
    def test_the_operations_guide_examples_parse
      blocks = File.read(File.expand_path("../../docs/OPERATIONS.md", __dir__)).scan(/^```ruby\n(.*?)^```$/m).flatten
      assert_operator blocks.size, :>=, 3
      blocks.each { |code| assert Ripper.sexp(code), "does not parse:\n#{code}" }
    end

    def test_bad_arguments_are_named
      skip "ill-typed on purpose: the signatures refuse these calls" if RBS_RUNTIME_CHECK

      assert_error(TypeError, /store must be a lease store .*got "sqlite:x" \(String\)/) { Web.new(store: "sqlite:x") }
      assert_error(TypeError, /fences must respond to #highest/) { Web.new(fences: Object.new) }
      assert_error(TypeError, "read_only must be true or false, got nil") { Web.new(read_only: nil) }
      assert_error(TypeError, /who must respond to #call/) { Web.new(who: "admin") }
      assert_error(ArgumentError, "per_page must be between 1 and 1000, got 0") { Web.new(per_page: 0) }
      assert_error(TypeError, "per_page must be an Integer, got 1.5") { Web.new(per_page: 1.5) }
      assert_error(ArgumentError, "secret must be at least 32 bytes, got 6") { Web.new(secret: "secret") }
      assert_error(TypeError, /events must be true or false/) { Web.new(events: 1) }
    end
  end
end
