"""What people read: the terminal's tables (`tables`, laid out to the terminal's width by
`fit`), the summary `sanlab run` prints when they would not fit a screen (`summary`), and the
rows and captions the terminal and the HTML report both show (`rows`), so that both say the
same thing in the same words.

The report (`sanlab.report`) imports `rows` only, never the terminal's tables.
"""
