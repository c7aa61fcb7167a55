# frozen_string_literal: true

require_relative "browser_helper"
require_relative "../jobs/sidekiq_cluster"
require "sidekiq"

module LeaseMachines
  # The Sidekiq Web tab in a real browser, on the running Sidekiq (6.4 on
  # the host; 7.3 and 8.1 in script/matrix's trixie and sid roots, driven by
  # the host's Chromium through the chromedriver script/matrix starts:
  # LEASE_MACHINES_WEBDRIVER_URL). Sidekiq::Web with the tab is served by
  # rackup from test/web/browser/config.ru on a real Redis. A screenshot of
  # the tab per Sidekiq version: docs/web-sidekiq-X.Y.png
  # (LEASE_MACHINES_SCREENSHOTS).
  class WebSidekiqTabBrowserTest < Minitest::Test
    include BrowserTestHelper

    def setup
      super
      @lease = @store.authority("reports/nightly").acquire(owner: 7, ttl: 600).lease
      @store.authority("reports/weekly").acquire(owner: 8, ttl: 600, label: "worker-2 pid 311")
      @store.authority("billing/nightly").acquire(owner: 9, ttl: 600)
      XSS_NAMES.each { |name| @store.authority(name).acquire(owner: 1, ttl: 600) }
      @sidekiq = serve("sidekiq", "REDIS_URL" => SidekiqCluster.redis_url)
    end

    def test_the_tab_lists_filters_and_force_releases
      @browser.visit(@sidekiq.url("/sidekiq/"))
      tab = @browser.find(%(a[href="/sidekiq/leases"]))
      assert_equal "Leases", @browser.text(tab), "the tab is in Sidekiq's navigation"
      @browser.click(%(a[href="/sidekiq/leases"]))
      assert_equal @sidekiq.url("/sidekiq/leases"), @browser.current_url
      assert_equal (XSS_NAMES + %w[billing/nightly reports/nightly reports/weekly]).sort,
                   @browser.texts("td.lm-name").sort
      assert @browser.script(NO_XSS), "Sidekiq's policy allows inline scripts: only the escaping stops them"

      @browser.type("#lm-match", "reports/*")
      @browser.click(".lm-filter button")
      assert_equal %w[reports/nightly reports/weekly], @browser.texts("td.lm-name")
      assert_equal ["owner 7", "worker-2 pid 311"], @browser.texts("td.lm-holder")
      screenshot("web-sidekiq-#{::Sidekiq::VERSION[/\A\d+\.\d+/]}.png")

      @browser.click(%(td.lm-name a[href$="name=reports%2Fnightly"]))
      @browser.click("a.lm-release")
      assert_equal "Force release reports/nightly?", @browser.text(@browser.find("h2"))
      assert @store.status("reports/nightly").held?, "the confirmation page releases nothing"
      @browser.click("form.lm-confirm button")
      assert_match(/\AReleased\./, @browser.text(@browser.find(".lm-notice")))
      assert_nil @store.status("reports/nightly").lease
      assert_includes File.read(log), %(force-released from the web UI by "127.0.0.1")
    end

    # A page of another origin (another port) posts the release form's
    # fields, with the operator's cookies, to the tab: Sidekiq's own CSRF
    # protection refuses it.
    def test_a_forged_post_from_another_origin_is_refused
      @browser.visit(@sidekiq.url("/sidekiq/leases")) # the operator's browser holds Sidekiq's session
      forger = serve("forger", "LM_TARGET" => @sidekiq.url("/sidekiq/leases/release"),
                               "LM_FIELDS" => "name=reports/nightly&token=#{@lease.token}")
      @browser.visit(forger.url("/"))
      @browser.click("#go")
      assert_equal @sidekiq.url("/sidekiq/leases/release"), @browser.current_url
      assert_match(/Forbidden/i, @browser.script("return document.body.innerText"))
      assert @store.status("reports/nightly").held?, "nothing was released"
    end
  end
end
