"""Short Japanese texts (the default language): enough to prove the contract, cheap to run."""

SHORT = "こんにちは。"
TWO_SENTENCES = "こんにちは。今日はいい天気ですね。"
LONG = "今日はとても良い天気です。公園を散歩しましょう。鳥が歌っています。花もきれいに咲いています。夕方には家に帰りましょう。"
TOO_LONG = "あ" * 3501
