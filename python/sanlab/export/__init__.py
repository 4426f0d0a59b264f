"""What a run writes for other tools and for later: the run folder (`runfolder`), fio's JSON
(`fio`), vdbench's summary (`vdbench`) and esxtop's batch CSV (`esxtop`). Each foreign format's
own number layout lives with its writer.

`runfolder` is the top of this package: it writes the others' files and the report page.
"""
